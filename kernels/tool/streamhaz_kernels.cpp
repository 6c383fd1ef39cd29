// streamhaz-kernels: the libclang scanner behind `streamhaz kernels`, a program of its own so
// that the streamhaz command does not link libclang.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "streamhaz/kernels/scan.h"

namespace {

constexpr int kExitUsage = 2;

int run_scan(const streamhaz::kernels::ScanOptions& options, const std::string& output, bool force) {
  if (!output.empty() && std::filesystem::exists(output) && !force)
    throw std::runtime_error(output + " already exists; use --force to overwrite it");
  streamhaz::kernels::ScanResult r = streamhaz::kernels::scan(options);
  for (const std::string& w : r.warnings) std::cerr << "streamhaz kernels: warning: " << w << "\n";
  std::string text = r.document.dump(2) + "\n";
  if (output.empty()) {
    std::cout << text << std::flush;
    if (!std::cout) throw std::runtime_error("cannot write standard output");
  } else {
    // Written beside the target and renamed: a failed write leaves the old file as it was.
    std::string partial = output + ".partial";
    std::ofstream f(partial, std::ios::trunc | std::ios::binary);
    f << text;
    f.close();
    if (!f) {
      std::error_code ec;
      std::filesystem::remove(partial, ec);
      throw std::runtime_error("cannot write " + output);
    }
    std::filesystem::rename(partial, output);
  }
  size_t n = r.document["kernels"].size();
  std::cerr << "streamhaz kernels: " << n << " kernel" << (n == 1 ? "" : "s") << " summarised"
            << (output.empty() ? "" : " in " + output) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"streamhaz kernels: static footprints of CUDA kernels (docs/kernels.md)"};
  app.name("streamhaz kernels");
  app.require_subcommand(1);
  auto* scan = app.add_subcommand(
      "scan",
      "Parse CUDA sources with libclang and write, per __global__ function, which pointer\n"
      "parameters it reads and writes and how many elements from each (kernels.json, for\n"
      "`streamhaz check --kernels`). No CUDA toolkit is needed: a built-in prelude declares\n"
      "what kernels use from the toolkit's headers.");
  streamhaz::kernels::ScanOptions options;
  std::string output;
  bool force = false, no_prelude = false;
  scan->add_option("SOURCE", options.files, "CUDA source files (.cu)")->required();
  scan->add_option("-o,--output", output, "Write kernels.json here instead of standard output");
  scan->add_flag("--force", force, "Replace --output if it exists");
  scan->add_flag("--no-prelude", no_prelude,
                 "Do not force-include the built-in CUDA prelude (pass the toolkit's headers after --)");
  scan->footer(
      "Extra clang arguments (include paths, defines) follow `--`:\n"
      "  streamhaz kernels scan src/a.cu src/b.cu -o kernels.json -- -Isrc -DNDEBUG\n"
      "Exit status: 0, or 2 when a source cannot be read or parsed, or the output exists.");
  // Everything after `--` goes to clang.
  std::vector<std::string> clang_args;
  int own = argc;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      own = i;
      for (int j = i + 1; j < argc; ++j) clang_args.push_back(argv[j]);
      break;
    }
  try {
    app.parse(own, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  options.clang_args = clang_args;
  options.prelude = !no_prelude;
  try {
    return run_scan(options, output, force);
  } catch (const std::exception& e) {
    std::cerr << "streamhaz kernels: " << e.what() << "\n";
    return kExitUsage;
  }
}
