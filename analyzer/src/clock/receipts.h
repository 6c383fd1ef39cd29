// Where cross-rank order entered one rank: each collective receipt ticks the receiving
// stream's timeline and is noted here with the frontier it brought. A clock of the rank knows a
// receipt iff it covers that tick, so what a clock knows of other ranks is the frontier of the
// latest receipt it covers on each timeline: a handful of shared pointers, whatever the rank
// count. That is what a rank posts at its next collective. A receipt of a collective the rank
// ran ahead of holds the promise of its frontier (knowledge.h).
#pragma once

#include <utility>
#include <vector>

#include "clock/knowledge.h"
#include "clock/vector_clock.h"

namespace streamhaz::analysis {

class Receipts {
 public:
  // Receipt at `value` of `timeline` (the stream's tick right after it joined the collective).
  void add(TimelineId timeline, ClockValue value, Known knowledge);
  // Appends to `out` what `clock` knows: one entry per timeline at most, settled (settle_known).
  void known(const VectorClock& clock, std::vector<Known>& out) const;
  std::vector<Known> known(const VectorClock& clock) const {
    std::vector<Known> out;
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
    std::vector<std::pair<ClockValue, Known>> at;  // by value
    size_t prune_at = 16;
  };
  std::vector<std::pair<ClockValue, Known>> kept_;  // prune's scratch
  mutable std::vector<Known> mine_;                 // known's scratch
  std::vector<Table> by_timeline_;
};

}  // namespace streamhaz::analysis
