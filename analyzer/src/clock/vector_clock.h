// Vector clocks over timelines. A timeline is one stream of one rank, or one host timeline
// (per rank, or per host thread in strict mode); timelines are numbered densely across all
// ranks so that cross-rank NCCL edges can be expressed in the same clocks.
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
  // Advances this clock's own timeline and returns the new epoch.
  Epoch tick(TimelineId own);
  // Pointwise maximum; returns whether anything grew.
  bool join(const VectorClock& other);
  // Does the operation at `e` happen before (or is it) the point this clock describes?
  bool covers(Epoch e) const { return e.clock <= get(e.timeline); }
  size_t size() const { return v_.size(); }
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
