// Helpers for scenario tests: write a TraceBuilder's ranks to a fresh folder, analyse them,
// and pick findings apart.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/replay.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::testing {

using namespace streamhaz::trace;
using streamhaz::analysis::AnalysisOptions;
using streamhaz::analysis::AnalysisResult;
using streamhaz::analysis::Finding;

// Every folder fresh_dir() handed out, removed when the test process exits: a test that stops
// at a failed REQUIRE, or keeps its folder to the end, leaves nothing in the temporary folder.
class TempDirs {
 public:
  std::filesystem::path add(std::filesystem::path dir) {
    std::lock_guard lock(mu_);
    dirs_.push_back(dir);
    return dir;
  }
  ~TempDirs() {
    for (const auto& dir : dirs_) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }

 private:
  std::mutex mu_;
  std::vector<std::filesystem::path> dirs_;
};

inline std::filesystem::path fresh_dir() {
  static std::atomic<int> counter{0};
  static TempDirs made;
  auto dir = std::filesystem::temp_directory_path() /
             ("streamhaz-analyzer-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  return made.add(dir);
}

inline AnalysisResult analyze_run(const TraceBuilder& run, const AnalysisOptions& options = {}) {
  const auto dir = fresh_dir();
  run.write_dir(dir.string());
  AnalysisResult result = analysis::analyze(expand_trace_paths({dir.string()}), options);
  std::filesystem::remove_all(dir);
  return result;
}

// The run's records as the replay and over-synchronisation passes load them: written to files
// and read back through the trace reader.
inline std::vector<analysis::RankRecords> load(const TraceBuilder& run) {
  const auto dir = fresh_dir();
  run.write_dir(dir.string());
  auto records = analysis::load_run(expand_trace_paths({dir.string()}));
  std::filesystem::remove_all(dir);
  return records;
}

// The same analysis without files: the builder's records handed over in memory.
inline std::vector<analysis::RankRecords> records_of(const TraceBuilder& run) {
  std::vector<analysis::RankRecords> ranks;
  for (int r = 0; r < run.world_size(); ++r) {
    analysis::RankRecords& rr = ranks.emplace_back();
    rr.rank = r;
    rr.path = "rank" + std::to_string(r);
    rr.records = const_cast<TraceBuilder&>(run).rank(r).records();
  }
  return ranks;
}
inline AnalysisResult analyze_in_memory(const TraceBuilder& run, const AnalysisOptions& options = {}) {
  return analysis::analyze_records(records_of(run), options);
}

// Analyses only the given ranks' files of a run (as if the others were missing).
inline AnalysisResult analyze_ranks(const TraceBuilder& run, const std::vector<int>& ranks) {
  const auto dir = fresh_dir();
  run.write_dir(dir.string());
  std::vector<std::string> files;
  for (int r : ranks) files.push_back((dir / ("rank" + std::to_string(r) + ".shz")).string());
  AnalysisResult result = analysis::analyze(files, {});
  std::filesystem::remove_all(dir);
  return result;
}

inline std::vector<const Finding*> findings_on(const AnalysisResult& r, const std::string& buffer) {
  std::vector<const Finding*> out;
  for (const Finding& f : r.findings)
    if (f.buffer.name == buffer) out.push_back(&f);
  return out;
}

}  // namespace streamhaz::testing
