#include "shadow/read_index.h"

#include <algorithm>

namespace streamhaz::analysis {

ReadIndex::Timeline& ReadIndex::timeline(TimelineId id) {
  for (Timeline& t : timelines_)
    if (t.id == id) return t;
  Timeline& t = timelines_.emplace_back();
  t.id = id;
  return t;
}

void ReadIndex::add(const OpStamp& op, uint64_t lo, uint64_t hi) {
  Timeline& t = timeline(op.epoch.timeline);
  std::vector<Read>& reads = op.flags & kOpInGraph ? t.in_graph : t.plain;
  const Read r{op, lo, hi};
  // A timeline's operations come in clock order; should one not, it still goes to its place (after
  // the ranges of the same operation, which share its clock; dropped reads keep their epochs).
  if (reads.empty() || reads.back().op.epoch.clock <= op.epoch.clock) {
    reads.push_back(r);
    return;
  }
  const auto at = std::upper_bound(reads.begin(), reads.end(), op.epoch.clock,
                                   [](ClockValue c, const Read& x) { return c < x.op.epoch.clock; });
  reads.insert(at, r);
}

size_t ReadIndex::end_of_op(const std::vector<Read>& reads, size_t first) {
  size_t end = first + 1;
  while (end < reads.size() && reads[end].op == reads[first].op) ++end;
  return end;
}

void ReadIndex::compact(Timeline& t) {
  auto gone = [](const Read& r) { return !r.op.valid(); };
  std::erase_if(t.plain, gone);
  std::erase_if(t.in_graph, gone);
  t.dropped = 0;
}

size_t ReadIndex::size() const {
  size_t n = 0;
  for (const Timeline& t : timelines_) n += t.plain.size() + t.in_graph.size() - t.dropped;
  return n;
}

}  // namespace streamhaz::analysis
