#include "replay/steps.h"

namespace streamhaz::analysis {
namespace {

// Where the outermost segment `name` of `path` ends, or npos: "?/step/backward" -> 6.
size_t outermost_end(const std::string& path, const std::string& name) {
  for (size_t pos = 0; pos <= path.size();) {
    const size_t end = std::min(path.find('/', pos), path.size());
    if (end - pos == name.size() && path.compare(pos, end - pos, name) == 0) return end;
    pos = end + 1;
  }
  return std::string::npos;
}

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
std::vector<std::vector<uint64_t>> find_steps(const std::vector<trace::Record>& records, const std::string& name) {
  std::unordered_map<trace::StringId, std::string> strings;
  std::vector<std::vector<uint64_t>> steps;
  std::string first, prev;
  bool have_first = false, have_prev = false;
  for (const trace::Record& r : records) {
    if (const auto* s = std::get_if<trace::StringDef>(&r)) {
      strings[s->id] = s->text;
      continue;
    }
    const trace::OpCommon* op = trace::op_common(r);
    if (!op) continue;
    const std::string& path = strings[op->nvtx];
    const size_t at = outermost_end(path, name);
    if (at == std::string::npos) {
      have_prev = false;
      continue;
    }
    const std::string child = child_below(path, at);
    if (!have_first) {
      first = child;
      have_first = true;
    }
    if (child == first && (!have_prev || prev != first)) steps.emplace_back();
    if (!steps.empty()) steps.back().push_back(op->seq);
    prev = child;
    have_prev = true;
  }
  return steps;
}

}  // namespace streamhaz::analysis
