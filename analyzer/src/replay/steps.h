// Training steps in a trace: the instances of one NVTX range (by default "step"), found from
// the range paths the operations were issued in.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// Finds step instances record by record (a trace need not be held in memory). An instance is
// one of the outermost range `name`: from its push to its pop where the trace has range edges
// (format version 5), every operation in between belonging to it whatever thread issued it
// (PyTorch's backward runs on its own threads, outside the script's ranges). Older traces have
// only the operations' paths: an instance starts where the first sub-range seen directly below
// the range (or the range itself) comes again after others, or after operations outside the
// range. Ranges nested deeper, a framework's own included, never start an instance.
class StepFinder {
 public:
  explicit StepFinder(std::string name) : name_(std::move(name)) {}
  // Returns the index of the step the record belongs to, or -1: an operation issued inside the
  // range, and with range edges also the edges and every other call between push and pop.
  int feed(const trace::Record& r);
  int steps() const { return steps_; }
  bool range_edges() const { return edges_; }  // the trace has RangeEdge records (so far)

 private:
  std::string name_;
  std::unordered_map<trace::StringId, std::string> strings_;
  std::string first_, prev_;
  bool have_first_ = false, have_prev_ = false;
  std::string instance_;  // the range's own name at the last operation (ProfilerStep#N changes)
  bool have_instance_ = false;
  int steps_ = 0;
  // Range edges: the open instance's path, if one is open.
  bool edges_ = false, open_ = false;
  trace::StringId open_path_ = 0;
  int feed_edge(const trace::RangeEdge& e);
  // An operation's or range edge's NVTX path as the finder reads it, kept by path: a run's
  // operations come from a few paths, taken in turn.
  struct PathParts {
    size_t at = std::string::npos;  // the range's end in the path, npos: outside it
    std::string instance, child;
    bool opens_outermost = false;  // a range edge of this path opens or closes an instance
  };
  std::unordered_map<trace::StringId, PathParts> paths_;
  // The last path asked for: a run's operations come from one path many times in a row.
  trace::StringId last_nvtx_ = 0;
  const PathParts* last_parts_ = nullptr;
  const PathParts& parts_of(trace::StringId nvtx);
};

// The operations (by seq) of each step instance (StepFinder), in issue order. Empty if no
// operation was issued inside the range.
std::vector<std::vector<uint64_t>> find_steps(const std::vector<trace::Record>& records, const std::string& name);

// The operations of steps that start at record indices `starts` (ascending), the last ending
// before record `end` (steps found without a range: pattern_steps.h).
std::vector<std::vector<uint64_t>> steps_at(const std::vector<trace::Record>& records,
                                            const std::vector<uint64_t>& starts, uint64_t end);

// The steps of a loaded trace: the range's instances, else those of its repeating pattern
// (RankRecords::pattern_step_starts); `from_pattern` says which.
std::vector<std::vector<uint64_t>> steps_of(const RankRecords& rr, const std::string& name,
                                            bool* from_pattern = nullptr);

}  // namespace streamhaz::analysis
