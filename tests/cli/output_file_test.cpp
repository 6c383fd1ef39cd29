// OutputFile (cli/output_file.h) on its own: what an interrupted command leaves beside its
// output, and which existing files it refuses to replace.
#define CATCH_CONFIG_MAIN
// The signals below must meet the handlers a plain process has, not Catch's own.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "output_file.h"

namespace fs = std::filesystem;
using streamhaz::cli::OutputFile;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("streamhaz-output-file-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// Runs `body` in a child process and returns how it ended (waitpid's status).
template <class Body> int in_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("a signal before commit leaves no temporary file beside the output", "[output-file]") {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    const fs::path dir = fresh_dir("signal-" + std::to_string(sig));
    const int status = in_child([&] {
      OutputFile out((dir / "report.html").string(), false);
      out.stream() << "half a report";
      ::raise(sig);  // as from the terminal or a CI runner's timeout
    });
    CHECK(WIFSIGNALED(status));  // it still dies of the signal, as the caller expects
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == sig));
    CHECK(entries(dir) == 0);  // neither the output nor its .report.html.XXXXXX
    fs::remove_all(dir);
  }
}

TEST_CASE("an ignored signal stays ignored", "[output-file]") {
  const fs::path dir = fresh_dir("ignored");
  const int status = in_child([&] {
    ::signal(SIGHUP, SIG_IGN);  // nohup
    OutputFile out((dir / "report.html").string(), false);
    out.stream() << "a report";
    ::raise(SIGHUP);
    out.commit();
  });
  CHECK(WIFEXITED(status));
  CHECK(fs::exists(dir / "report.html"));
  fs::remove_all(dir);
}

TEST_CASE("an input is never replaced, --force or not", "[output-file]") {
  const fs::path dir = fresh_dir("input");
  const fs::path trace = dir / "rank0.shz";
  std::ofstream(trace) << "a trace";
  fs::create_symlink("rank0.shz", dir / "link");
  for (const fs::path& out : {trace, dir / "link", dir / "." / "rank0.shz"})
    CHECK_THROWS_WITH(OutputFile(out.string(), true, {trace.string()}), Catch::Contains("refusing to write over it"));
  CHECK_NOTHROW(OutputFile((dir / "other").string(), true, {trace.string()}));
  fs::remove_all(dir);
}
