// OutputFile (cli/output_file.h) on its own: which existing files it refuses to replace.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

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

}  // namespace

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
