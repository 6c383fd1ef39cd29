// Paths that are not regular files: a FIFO must be refused at once (opening one for reading
// waits for a writer for ever), and a folder's *.shz entry that is not a file must not drop a
// rank without a word.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "sample_records.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;
namespace fs = std::filesystem;

TEST_CASE("a FIFO given as a trace is refused, not waited on", "[format]") {
  const std::string fifo = temp_path("reader-fifo");
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(TraceReader(fifo), Catch::Contains("not a regular file"));
  fs::remove(fifo);
}

TEST_CASE("a folder's .shz entry that is not a regular file is an error naming it", "[format]") {
  const std::string dir = temp_path("expand-special");
  fs::remove_all(dir);
  TraceBuilder run(1);
  run.write_dir(dir);
  SECTION("a FIFO") { REQUIRE(::mkfifo((dir + "/rank1.shz").c_str(), 0600) == 0); }
  SECTION("a link to nothing") { fs::create_symlink(dir + "/gone.shz", dir + "/rank1.shz"); }
  SECTION("a folder") { fs::create_directory(dir + "/rank1.shz"); }
  CHECK_THROWS_WITH(expand_trace_paths({dir}), Catch::Contains("rank1.shz") && Catch::Contains("not a regular file"));
  fs::remove_all(dir);
}

TEST_CASE("a link to a trace in a folder is read as that trace", "[format]") {
  const std::string dir = temp_path("expand-link");
  fs::remove_all(dir);
  TraceBuilder run(1);
  run.write_dir(dir);
  fs::rename(dir + "/rank0.shz", dir + "/real.trace");
  fs::create_symlink(dir + "/real.trace", dir + "/rank0.shz");
  CHECK(expand_trace_paths({dir}).size() == 1);
  fs::remove_all(dir);
}
