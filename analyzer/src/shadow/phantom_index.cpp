#include "shadow/phantom_index.h"

#include <algorithm>

namespace streamhaz::analysis {

PhantomIndex::Timeline& PhantomIndex::timeline(TimelineId id) {
  for (Timeline& t : timelines_)
    if (t.id == id) return t;
  Timeline& t = timelines_.emplace_back();
  t.id = id;
  return t;
}

void PhantomIndex::add(const OpStamp& kept, uint64_t lo, uint64_t hi) {
  std::vector<Entry>& e = timeline(kept.epoch.timeline).entries;
  const Entry x{kept, lo, hi, ++adds_};
  // A timeline's operations come in clock order; should one not, it still goes to its place (after
  // the ranges of the same phantom, which share its clock).
  if (e.empty() || e.back().op.epoch.clock <= kept.epoch.clock) {
    e.push_back(x);
    return;
  }
  e.insert(std::upper_bound(e.begin(), e.end(), kept.epoch.clock,
                            [](ClockValue c, const Entry& y) { return c < y.op.epoch.clock; }),
           x);
}

void PhantomIndex::replaced_in_latest(const OpStamp& by) {
  for (Replaced& r : replaced_)
    if (r.stream_slot == by.stream_slot) {
      r = {by.stream_slot, by.epoch, adds_};
      return;
    }
  replaced_.push_back({by.stream_slot, by.epoch, adds_});
}

bool PhantomIndex::in_latest(const Entry& x) const {
  if (!x.in_latest) return false;
  if (x.op.flags & kOpLastingPhantom) return true;
  for (const Replaced& r : replaced_)
    if (r.stream_slot == x.op.stream_slot) return x.added > r.adds || x.op.epoch == r.by;
  return true;
}

size_t PhantomIndex::size() const {
  size_t n = 0;
  for (const Timeline& t : timelines_) n += t.entries.size() - t.gone;
  return n;
}

}  // namespace streamhaz::analysis
