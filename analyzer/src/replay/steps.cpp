#include "replay/steps.h"

#include <fmt/format.h>

#include <algorithm>

#include "streamhaz/analysis/replay.h"
#include "streamhaz/trace/range_path.h"

namespace streamhaz::analysis {
namespace {

using trace::outermost_range_end;

// The segment right below the range: "step/backward/average_tensor" -> "backward"; "" for an
// operation issued in the range itself.
std::string child_below(const std::string& path, size_t range_end) {
  if (range_end >= path.size()) return {};
  const size_t from = range_end + 1;
  return path.substr(from, std::min(path.find('/', from), path.size()) - from);
}

}  // namespace

// Instances are told apart by the first sub-range of the outermost range alone: frameworks open
// ranges of their own inside a step (DeepSpeed one per engine method, one of them named `step`
// too), and whole sub-paths come back several times within one step.
int StepFinder::feed_edge(const trace::RangeEdge& e) {
  edges_ = true;
  const bool outermost = parts_of(e.path).opens_outermost;
  if (open_) {
    // An instance found without its push (open_path_ 0) ends at the first pop of the range.
    if (!e.push && (e.path == open_path_ || (open_path_ == 0 && outermost))) open_ = false;
    return steps_ - 1;
  }
  // Only the outermost range of the name opens an instance ("step", "train/step"; not "step/step").
  if (!e.push || !outermost) return -1;
  open_ = true;
  open_path_ = e.path;
  return steps_++;
}

const StepFinder::PathParts& StepFinder::parts_of(trace::StringId nvtx) {
  if (last_parts_ && nvtx == last_nvtx_) return *last_parts_;
  auto [known, fresh] = paths_.try_emplace(nvtx);
  PathParts& parts = known->second;
  last_nvtx_ = nvtx;
  last_parts_ = &parts;  // map nodes stay where they are until erased
  if (!fresh) return parts;
  const auto path = strings_.find(nvtx);
  if (path == strings_.end()) return parts;
  parts.opens_outermost = trace::opens_outermost_range(path->second, name_);
  parts.at = outermost_range_end(path->second, name_);
  if (parts.at != std::string::npos) {
    const size_t at = parts.at;
    const size_t slash = at == 0 ? std::string::npos : path->second.rfind('/', at - 1);
    const size_t begin = slash == std::string::npos ? 0 : slash + 1;
    parts.instance = path->second.substr(begin, at - begin);
    parts.child = child_below(path->second, at);
  }
  return parts;
}

int StepFinder::feed(const trace::Record& r) {
  if (const auto* s = std::get_if<trace::StringDef>(&r)) {
    strings_[s->id] = s->text;
    paths_.erase(s->id);  // read again if an operation names it
    last_parts_ = nullptr;
    return -1;
  }
  if (const auto* e = std::get_if<trace::RangeEdge>(&r)) return feed_edge(*e);
  const trace::OpCommon* op = trace::op_common(r);
  // Between a push and its pop every call belongs to the instance; without edges only operations
  // say where they were issued.
  if (!op) return edges_ && open_ && trace::api_seq(r) != 0 ? steps_ - 1 : -1;
  if (edges_ && open_) return steps_ - 1;
  const PathParts& parts = parts_of(op->nvtx);
  const size_t at = parts.at;
  if (edges_) {
    if (open_) return steps_ - 1;
    if (at == std::string::npos) return -1;
    // Inside the range with no push seen (pushed before the tracer started): an instance of its own.
    open_ = true;
    open_path_ = 0;
    return steps_++;
  }
  if (at == std::string::npos) {
    have_prev_ = false;
    return -1;
  }
  // A range named anew for each instance (ProfilerStep#7, #8...): a new name, a new instance.
  const std::string& instance = parts.instance;
  const std::string& child = parts.child;
  if (!have_first_) {
    first_ = child;
    have_first_ = true;
  }
  if (have_instance_ && instance != instance_) {
    ++steps_;
    first_ = child;
  } else if (child == first_ && (!have_prev_ || prev_ != first_)) {
    ++steps_;
  }
  instance_ = instance;
  have_instance_ = true;
  prev_ = child;
  have_prev_ = true;
  return steps_ - 1;
}

std::vector<std::vector<uint64_t>> find_steps(const std::vector<trace::Record>& records, const std::string& name) {
  StepFinder finder(name);
  std::vector<std::vector<uint64_t>> steps;
  for (const trace::Record& r : records) {
    const int step = finder.feed(r);
    if (step < 0 || !trace::op_common(r)) continue;
    if (static_cast<size_t>(step) >= steps.size()) steps.resize(step + 1);
    steps[step].push_back(trace::op_common(r)->seq);
  }
  return steps;
}

std::vector<std::vector<uint64_t>> steps_at(const std::vector<trace::Record>& records,
                                            const std::vector<uint64_t>& starts, uint64_t end) {
  std::vector<std::vector<uint64_t>> steps(starts.size());
  for (size_t i = 0; i < starts.size(); ++i) {
    const uint64_t to = std::min<uint64_t>(i + 1 < starts.size() ? starts[i + 1] : end, records.size());
    for (uint64_t at = starts[i]; at < to; ++at)
      if (const trace::OpCommon* op = trace::op_common(records[at])) steps[i].push_back(op->seq);
  }
  return steps;
}

std::vector<std::vector<uint64_t>> steps_of(const RankRecords& rr, const std::string& name, bool* from_pattern) {
  std::vector<std::vector<uint64_t>> steps = find_steps(rr.records, name);
  const bool pattern = steps.empty() && rr.pattern_period;
  if (pattern) steps = steps_at(rr.records, rr.pattern_step_starts, rr.pattern_steps_end);
  if (from_pattern) *from_pattern = pattern;
  return steps;
}

std::string describe_step_times(const Schedule& measured, const std::vector<RankRecords>& run) {
  if (measured.measured_steps == 0) return {};
  size_t slowest = 0;
  for (size_t ri = 0; ri < measured.rank_step_ns.size(); ++ri)
    if (measured.rank_step_ns[ri] > measured.rank_step_ns[slowest]) slowest = ri;
  if (slowest >= measured.step_windows.size() || slowest >= run.size()) return {};
  std::vector<double> ms;
  for (const auto& [a, b] : measured.step_windows[slowest]) ms.push_back(static_cast<double>(b - a) / 1e6);
  if (ms.empty()) return {};
  std::string text = fmt::format("step times of rank {}: ", run[slowest].rank);
  constexpr size_t kListed = 8;  // more are summarised
  if (ms.size() <= kListed) {
    for (size_t i = 0; i < ms.size(); ++i) text += fmt::format("{}{:.3f}", i ? ", " : "", ms[i]);
    return text + " ms";
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  return text + fmt::format("{} steps, {:.3f} to {:.3f} ms, median {:.3f} ms", ms.size(), sorted.front(),
                            sorted.back(), sorted[sorted.size() / 2]);
}

}  // namespace streamhaz::analysis
