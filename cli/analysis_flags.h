// The analysis options the verbs that check traces share (`check`, `report`), declared once:
// the same flags, defaults and help texts everywhere, turned into one CheckRequest.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "streamhaz/analysis/check.h"

namespace streamhaz::cli {

struct AnalysisFlags {
  bool per_thread_host = false;
  std::string kernels;
  unsigned jobs = 0;  // threads checking ranks at once; 0: every core where threads pay
  bool no_sync = false;
  uint64_t sync_window = analysis::SyncOptions{}.window_records;
  uint64_t sync_window_syncs = analysis::SyncOptions{}.window_syncs;
  double min_cost_pct = 1.0;
  std::string step_range = "step";
  int warmup_steps = analysis::SyncOptions{}.warmup_steps;
  analysis::SyncAlgorithm sync_algorithm = analysis::SyncOptions{}.algorithm;
};

// Adds the flags to `cmd`; returns --no-sync's option, for options that exclude it.
CLI::Option* add_analysis_flags(CLI::App* cmd, AnalysisFlags& flags);

analysis::CheckRequest check_request(const AnalysisFlags& flags, std::vector<std::string> files);

}  // namespace streamhaz::cli
