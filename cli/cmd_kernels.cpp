// `streamhaz kernels ...`: runs streamhaz-kernels, the libclang scanner built beside this
// program, so that streamhaz itself does not link libclang (docs/kernels.md).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"

namespace streamhaz::cli {

namespace {

std::filesystem::path scanner_path() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("kernels: cannot find this program's folder: " + ec.message());
  return self.parent_path() / "streamhaz-kernels";
}

}  // namespace

void add_kernels_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "kernels",
      "Static kernel footprints: `kernels scan SOURCE.cu... -o kernels.json [-- CLANG_ARGS]`\n"
      "summarises which pointer parameters each __global__ function reads and writes\n"
      "(`streamhaz kernels scan --help`)");
  // Every argument, --help included, belongs to the scanner.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->allow_extras();
  cmd->callback([cmd, &exit_code] {
    std::vector<std::string> args = cmd->remaining();
    std::filesystem::path scanner = scanner_path();
    if (access(scanner.c_str(), X_OK) != 0)
      throw std::runtime_error("kernels: " + scanner.string() +
                               " not found (it is built where libclang is found: scripts/setup.sh installs libclang-dev)");
    std::vector<char*> argv;
    std::string name = scanner.string();
    argv.push_back(name.data());
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(name.c_str(), argv.data());
    exit_code = kExitUsage;
    throw std::runtime_error("kernels: cannot run " + name + ": " + std::strerror(errno));
  });
}

}  // namespace streamhaz::cli
