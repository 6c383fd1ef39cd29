// Vector clocks over timelines. A timeline is one stream of one rank, or one host timeline
// (per rank, or per host thread in strict mode). By default each rank numbers only its own
// timelines and cross-rank order arrives through frontiers (frontier.h); the dense reference
// mode numbers the timelines of all ranks together and carries every rank in every clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace streamhaz::analysis {

using TimelineId = uint32_t;
using ClockValue = uint32_t;

// One point of one timeline: FastTrack's epoch. An operation is stored by its epoch only.
struct Epoch {
  TimelineId timeline = 0;
  ClockValue clock = 0;
  bool operator==(const Epoch&) const = default;
};

class VectorClock {
 public:
  ClockValue get(TimelineId t) const { return t < v_.size() ? v_[t] : 0; }
  void set(TimelineId t, ClockValue c);
  void clear() { v_.clear(); }  // back to the empty clock, capacity kept
  // Advances this clock's own timeline and returns the new epoch (inline: once per operation).
  Epoch tick(TimelineId own) {
    if (own >= v_.size()) v_.resize(own + 1, 0);
    return Epoch{own, ++v_[own]};
  }
  // Pointwise maximum; returns whether anything grew.
  bool join(const VectorClock& other);
  bool join(const ClockValue* v, size_t n);
  // Does the operation at `e` happen before (or is it) the point this clock describes?
  bool covers(Epoch e) const { return e.clock <= get(e.timeline); }
  size_t size() const { return v_.size(); }
  const ClockValue* data() const { return v_.data(); }
  bool operator==(const VectorClock& o) const;

 private:
  std::vector<ClockValue> v_;
};

// Hands out timeline numbers; shared by every rank of one analysis.
class TimelineRegistry {
 public:
  TimelineId add() { return next_++; }
  TimelineId count() const { return next_; }

 private:
  TimelineId next_ = 0;
};

}  // namespace streamhaz::analysis
