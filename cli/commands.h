// Each verb of the `streamhaz` command lives in its own cmd_*.cpp and registers itself here.
// A verb's callback returns the process exit status through `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace streamhaz::cli {

// Exit statuses shared by every verb (check's CI gate depends on them).
inline constexpr int kExitClean = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitUsage = 2;  // usage error or unreadable input

void add_inspect_command(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_kernels_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);

}  // namespace streamhaz::cli
