#include "clock/vector_clock.h"

#include <algorithm>

namespace streamhaz::analysis {

void VectorClock::set(TimelineId t, ClockValue c) {
  if (t >= v_.size()) v_.resize(t + 1, 0);
  v_[t] = c;
}

bool VectorClock::join(const VectorClock& other) { return join(other.v_.data(), other.v_.size()); }

bool VectorClock::join(const ClockValue* v, size_t n) {
  if (n > v_.size()) v_.resize(n, 0);
  bool grew = false;
  for (size_t i = 0; i < n; ++i) {
    if (v[i] > v_[i]) {
      v_[i] = v[i];
      grew = true;
    }
  }
  return grew;
}

bool VectorClock::operator==(const VectorClock& o) const {
  const size_t n = std::max(v_.size(), o.v_.size());
  for (size_t i = 0; i < n; ++i)
    if (get(static_cast<TimelineId>(i)) != o.get(static_cast<TimelineId>(i))) return false;
  return true;
}

}  // namespace streamhaz::analysis
