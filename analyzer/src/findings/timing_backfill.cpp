#include "findings/timing_backfill.h"

#include <unordered_map>
#include <unordered_set>

#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

void backfill_timings(std::vector<Finding>& findings, const std::map<int, std::string>& file_by_rank) {
  std::map<int, std::unordered_multimap<uint64_t, OpRef*>> wanted;
  for (Finding& f : findings)
    for (OpRef* op : {&f.first, &f.second}) wanted[op->rank].emplace(op->seq, op);
  for (auto& [rank, ops] : wanted) {
    auto file = file_by_rank.find(rank);
    if (file == file_by_rank.end()) continue;
    // Findings keep their first occurrence, usually early in the trace: stop reading once
    // every wanted operation has its interval.
    size_t missing = 0;
    for (auto it = ops.begin(); it != ops.end(); it = ops.equal_range(it->first).second) ++missing;
    std::unordered_set<uint64_t> timed;
    trace::TraceReader reader(file->second);
    trace::Record r;
    while (missing && reader.next(r)) {
      const auto* t = std::get_if<trace::Timing>(&r);
      if (!t) continue;
      auto [lo, hi] = ops.equal_range(t->op_seq);
      // Count each operation once: operations of a graph launched again share their seq and
      // have one Timing per launch; the first launch's interval is kept for all of them.
      if (lo == hi || timed.count(t->op_seq)) continue;
      timed.insert(t->op_seq);
      for (auto it = lo; it != hi; ++it) {
        it->second->start_ns = t->start_ns;
        it->second->end_ns = t->end_ns;
      }
      --missing;
    }
  }
}

}  // namespace streamhaz::analysis
