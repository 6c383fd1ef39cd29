#include "replay/steps.h"

namespace streamhaz::analysis {

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
    // The part of the path from the range on: "?/step/backward" -> "step/backward".
    size_t at = std::string::npos;
    for (size_t pos = 0; pos <= path.size();) {
      const size_t end = std::min(path.find('/', pos), path.size());
      if (path.compare(pos, end - pos, name) == 0 && end - pos == name.size()) {
        at = pos;
        break;
      }
      pos = end + 1;
    }
    if (at == std::string::npos) {
      have_prev = false;
      continue;
    }
    const std::string sub = path.substr(at);
    if (!have_first) {
      first = sub;
      have_first = true;
    }
    if (sub == first && (!have_prev || prev != first)) steps.emplace_back();
    if (!steps.empty()) steps.back().push_back(op->seq);
    prev = sub;
    have_prev = true;
  }
  return steps;
}

}  // namespace streamhaz::analysis
