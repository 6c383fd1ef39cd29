#include "clock/vector_clock.h"

#include <algorithm>

namespace streamhaz::analysis {

VectorClock& VectorClock::operator=(VectorClock&& o) noexcept {
  if (this == &o) return *this;
  if (o.heap_) {  // take the heap array
    heap_ = std::move(o.heap_);
    capacity_ = o.capacity_;
    size_ = o.size_;
  } else {
    heap_.reset();
    capacity_ = kInline;
    size_ = o.size_;
    std::copy(o.inline_, o.inline_ + o.size_, inline_);
  }
  witness_ = std::move(o.witness_);
  o.size_ = 0;
  o.capacity_ = kInline;
  return *this;
}

void VectorClock::copy_witness(const VectorClock& o) {
  if (!o.witness_) witness_.reset();
  else if (witness_) *witness_ = *o.witness_;
  else witness_ = std::make_unique<Witness>(*o.witness_);
}

bool VectorClock::join_witnessed(const VectorClock& other, EdgeSites via) {
  static const Witness kNone;
  Witness joined = join_witness(witness_ ? *witness_ : kNone, data(), size_,
                                other.witness_ ? *other.witness_ : kNone, other.data(), other.size_, via);
  const bool same = witness_ ? joined == *witness_ : joined.empty();
  if (joined.empty()) witness_.reset();
  else if (witness_) *witness_ = std::move(joined);
  else witness_ = std::make_unique<Witness>(std::move(joined));
  return join(other.data(), other.size_) || !same;
}

void VectorClock::sites_needed_for(Epoch e, std::vector<SiteId>& out) const {
  if (!witness_ || !covers(e)) return;
  for (const WitnessEntry& w : *witness_)
    if (w.timeline == e.timeline && w.without < e.clock) out.push_back(w.site);
}

ClockValue VectorClock::sites_floor(TimelineId t) const {
  ClockValue floor = get(t);
  if (witness_)
    for (const WitnessEntry& w : *witness_)
      if (w.timeline == t && w.without < floor) floor = w.without;
  return floor;
}

bool VectorClock::rests_on_sites_slow(Epoch e) const {
  for (const WitnessEntry& w : *witness_)
    if (w.timeline == e.timeline && w.without < e.clock) return true;
  return false;
}

void VectorClock::assign(const ClockValue* v, uint32_t n) {
  if (n > capacity_) {
    heap_ = std::make_unique_for_overwrite<ClockValue[]>(n);
    capacity_ = n;
  }
  std::copy(v, v + n, mutable_data());
  size_ = n;
}

void VectorClock::grow(size_t n) {
  if (n > capacity_) {
    const size_t capacity = std::max<size_t>(n, 2 * size_t(capacity_));
    auto bigger = std::make_unique_for_overwrite<ClockValue[]>(capacity);
    std::copy(data(), data() + size_, bigger.get());
    heap_ = std::move(bigger);
    capacity_ = static_cast<uint32_t>(capacity);
  }
  std::fill(mutable_data() + size_, mutable_data() + n, 0);
  size_ = static_cast<uint32_t>(n);
}

void VectorClock::set(TimelineId t, ClockValue c) {
  if (t >= size_) grow(t + 1);
  mutable_data()[t] = c;
}

bool VectorClock::join(const ClockValue* v, size_t n) {
  if (n > size_) grow(n);
  ClockValue* mine = mutable_data();
  bool grew = false;
  for (size_t i = 0; i < n; ++i) {
    if (v[i] > mine[i]) {
      mine[i] = v[i];
      grew = true;
    }
  }
  return grew;
}

bool VectorClock::operator==(const VectorClock& o) const {
  const size_t n = std::max(size_, o.size_);
  for (size_t i = 0; i < n; ++i)
    if (get(static_cast<TimelineId>(i)) != o.get(static_cast<TimelineId>(i))) return false;
  return true;
}

bool VectorClock::covers_all(const VectorClock& other) const {
  const ClockValue* o = other.data();
  for (uint32_t i = 0; i < other.size_; ++i)
    if (o[i] > get(i)) return false;
  return true;
}

}  // namespace streamhaz::analysis
