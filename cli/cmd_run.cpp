// `streamhaz run -- CMD...`: runs a program with the tracer injected into every CUDA process
// it starts (children inherit the environment), and passes the program's exit status through.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"

namespace streamhaz::cli {
namespace {

namespace fs = std::filesystem;

// The tracer library sits next to the command (build tree: bin/ and lib/ side by side;
// installed: bin/ and lib/ under one prefix). STREAMHAZ_TRACER_LIB overrides.
std::string find_tracer_library() {
  if (const char* env = std::getenv("STREAMHAZ_TRACER_LIB")) return env;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  fs::path dir = fs::path(self).parent_path();
  for (const fs::path& candidate : {dir / "../lib/libstreamhaz-tracer.so", dir / "libstreamhaz-tracer.so"}) {
    std::error_code ec;
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return {};
}

void prepend_env_list(const char* name, const std::string& item, char separator) {
  const char* old = std::getenv(name);
  std::string value = item;
  if (old && *old) value += separator + std::string(old);
  setenv(name, value.c_str(), 1);
}

int run_traced(const std::vector<std::string>& command, const std::string& out_dir,
               const std::string& footprints, bool backtrace) {
  std::string tracer = find_tracer_library();
  if (tracer.empty()) {
    std::fprintf(stderr,
                 "streamhaz run: tracer library libstreamhaz-tracer.so not found next to this "
                 "command (built only where CUDA, CUPTI and NCCL are found); set "
                 "STREAMHAZ_TRACER_LIB\n");
    return kExitUsage;
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    std::fprintf(stderr, "streamhaz run: cannot create output folder %s: %s\n", out_dir.c_str(),
                 ec.message().c_str());
    return kExitUsage;
  }
  setenv("CUDA_INJECTION64_PATH", tracer.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", tracer.c_str(), 1);
  prepend_env_list("LD_PRELOAD", tracer, ':');
  setenv("STREAMHAZ_OUT_DIR", fs::absolute(out_dir).c_str(), 1);
  setenv("STREAMHAZ_FOOTPRINTS", footprints.c_str(), 1);
  if (backtrace) setenv("STREAMHAZ_BACKTRACE", "1", 1);

  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "streamhaz run: fork failed: %s\n", std::strerror(errno));
    return kExitUsage;
  }
  if (child == 0) {
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "streamhaz run: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return kExitUsage;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitUsage;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Run a program under the tracer; one trace file per CUDA process");
  struct Options {
    std::string out = "streamhaz-trace";
    std::string footprints = "api";
    bool backtrace = false;
    std::vector<std::string> command;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("--out", opts->out, "Folder for the trace files (one per rank)")->capture_default_str();
  cmd->add_option("--footprints", opts->footprints, "Kernel footprint tier: api, static or exact")
      ->check(CLI::IsMember({"api", "static", "exact"}))
      ->capture_default_str();
  cmd->add_flag("--backtrace", opts->backtrace, "Record a host backtrace per operation");
  cmd->add_option("command", opts->command, "The program and its arguments, after --")->required();
  cmd->footer("Example: streamhaz run --out traces/ -- torchrun --nproc_per_node 2 train.py\n"
              "Exit status: the program's own (128+N when it dies of signal N), 2 when the tracer is missing.");
  cmd->callback([opts, &exit_code] {
    exit_code = run_traced(opts->command, opts->out, opts->footprints, opts->backtrace);
  });
}

}  // namespace streamhaz::cli
