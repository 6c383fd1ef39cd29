// Where cross-rank order entered one rank: each collective receipt ticks the receiving
// stream's timeline and is noted here with the frontier it brought. A clock of the rank knows a
// receipt iff it covers that tick, so what a clock knows of other ranks is the frontier of the
// latest receipt it covers on each timeline: a handful of shared pointers, whatever the rank
// count. That is what a rank posts at its next collective.
#pragma once

#include <utility>
#include <vector>

#include "clock/frontier.h"
#include "clock/vector_clock.h"

namespace streamhaz::analysis {

class Receipts {
 public:
  // Receipt at `value` of `timeline` (the stream's tick right after it joined the collective).
  void add(TimelineId timeline, ClockValue value, FrontierRef knowledge);
  // Appends to `out` the frontiers `clock` knows: one per timeline at most, those covered by
  // another dropped.
  void known(const VectorClock& clock, std::vector<FrontierRef>& out) const;
  std::vector<FrontierRef> known(const VectorClock& clock) const {
    std::vector<FrontierRef> out;
    known(clock, out);
    return out;
  }
  // Receipts on `timeline` since its last pruning: the engine prunes when this grows.
  bool wants_pruning(TimelineId timeline) const;
  // Keeps, on `timeline`, only the latest receipt at or below each value in `live` (the
  // timeline's component in every clock the rank still holds); releases the other frontiers.
  // `live` is sorted in place.
  void prune(TimelineId timeline, std::vector<ClockValue>& live);
  bool empty() const { return by_timeline_.empty(); }
  size_t timelines() const { return by_timeline_.size(); }

 private:
  struct Table {
    std::vector<std::pair<ClockValue, FrontierRef>> at;  // by value
    size_t prune_at = 16;
  };
  std::vector<std::pair<ClockValue, FrontierRef>> kept_;  // prune's scratch
  std::vector<Table> by_timeline_;
};

}  // namespace streamhaz::analysis
