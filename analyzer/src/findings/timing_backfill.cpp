#include "findings/timing_backfill.h"

#include <unordered_map>

#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

void backfill_timings(std::vector<Finding>& findings, const std::map<int, std::string>& file_by_rank) {
  std::map<int, std::unordered_multimap<uint64_t, OpRef*>> wanted;
  for (Finding& f : findings)
    for (OpRef* op : {&f.first, &f.second}) wanted[op->rank].emplace(op->seq, op);
  for (auto& [rank, ops] : wanted) {
    auto file = file_by_rank.find(rank);
    if (file == file_by_rank.end()) continue;
    trace::TraceReader reader(file->second);
    trace::Record r;
    while (reader.next(r)) {
      const auto* t = std::get_if<trace::Timing>(&r);
      if (!t) continue;
      auto [lo, hi] = ops.equal_range(t->op_seq);
      for (auto it = lo; it != hi; ++it) {
        it->second->start_ns = t->start_ns;
        it->second->end_ns = t->end_ns;
      }
    }
  }
}

}  // namespace streamhaz::analysis
