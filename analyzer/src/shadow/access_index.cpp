#include "shadow/access_index.h"

#include <algorithm>

namespace streamhaz::analysis {

AccessIndex::Timeline& AccessIndex::timeline(TimelineId id) {
  for (Timeline& t : timelines_)
    if (t.id == id) return t;
  Timeline& t = timelines_.emplace_back();
  t.id = id;
  return t;
}

void AccessIndex::add(const OpStamp& op, uint64_t lo, uint64_t hi) {
  Timeline& t = timeline(op.epoch.timeline);
  std::vector<Access>& list = op.flags & kOpInGraph ? t.in_graph : t.plain;
  const Access r{op, lo, hi};
  // A timeline's operations come in clock order; should one not, it still goes to its place (after
  // the ranges of the same operation, which share its clock; dropped list keep their epochs).
  if (list.empty() || list.back().op.epoch.clock <= op.epoch.clock) {
    list.push_back(r);
    return;
  }
  const auto at = std::upper_bound(list.begin(), list.end(), op.epoch.clock,
                                   [](ClockValue c, const Access& x) { return c < x.op.epoch.clock; });
  list.insert(at, r);
}

size_t AccessIndex::end_of_op(const std::vector<Access>& list, size_t first) {
  size_t end = first + 1;
  while (end < list.size() && list[end].op == list[first].op) ++end;
  return end;
}

void AccessIndex::compact(Timeline& t) {
  auto gone = [](const Access& r) { return !r.op.valid(); };
  std::erase_if(t.plain, gone);
  std::erase_if(t.in_graph, gone);
  t.dropped = 0;
}

size_t AccessIndex::size() const {
  size_t n = 0;
  for (const Timeline& t : timelines_) n += t.plain.size() + t.in_graph.size() - t.dropped;
  return n;
}

}  // namespace streamhaz::analysis
