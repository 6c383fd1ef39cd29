// The analysis entry point: trace files in, findings out.
#pragma once

#include <string>
#include <vector>

#include "streamhaz/analysis/finding.h"

namespace streamhaz::analysis {

struct AnalysisOptions {
  // By default all host threads of a process form one timeline in observed API order;
  // strict mode gives each host thread its own clock (docs/analysis.md, "Timelines and clocks").
  bool per_thread_host = false;
  // kernels.json from `streamhaz kernels scan` (the static footprint tier), "" for none. Its
  // summaries apply to launches whose trace kept the argument bytes (`run --footprints static`).
  std::string kernels;
};

// Reads every file (one per rank, any order) and runs the happens-before race check.
// Throws trace::TraceError for unreadable or corrupt input; truncated files are analysed up
// to their last whole chunk and noted in AnalysisResult::warnings and ::traces.
AnalysisResult analyze(const std::vector<std::string>& trace_files, const AnalysisOptions& options = {});

}  // namespace streamhaz::analysis
