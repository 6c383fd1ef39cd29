// Vector clocks over timelines. A timeline is one stream of one rank, or one host timeline
// (per rank, or per host thread in strict mode). By default each rank numbers only its own
// timelines and cross-rank order arrives through frontiers (frontier.h); the dense reference
// mode numbers the timelines of all ranks together and carries every rank in every clock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "clock/witness.h"

namespace streamhaz::analysis {

using TimelineId = uint32_t;
using ClockValue = uint32_t;

// One point of one timeline: FastTrack's epoch. An operation is stored by its epoch only.
struct Epoch {
  TimelineId timeline = 0;
  ClockValue clock = 0;
  bool operator==(const Epoch&) const = default;
};

// A rank's clocks span its own few timelines (its streams and host timelines), so up to
// kInline components live inside the clock itself: a stream's or an event's clock is read
// without following a pointer (with a thousand ranks in turn, most such pointers miss the
// cache) and copied without allocating. Longer clocks (the dense mode) move to the heap.
class VectorClock {
 public:
  static constexpr uint32_t kInline = 8;

  VectorClock() = default;
  VectorClock(const VectorClock& o) {
    assign(o.data(), o.size_);
    if (o.witness_) witness_ = std::make_unique<Witness>(*o.witness_);
  }
  VectorClock& operator=(const VectorClock& o) {
    if (this != &o) {
      assign(o.data(), o.size_);
      if (o.witness_ || witness_) copy_witness(o);
    }
    return *this;
  }
  VectorClock(VectorClock&& o) noexcept { *this = std::move(o); }
  VectorClock& operator=(VectorClock&& o) noexcept;

  ClockValue get(TimelineId t) const { return t < size_ ? data()[t] : 0; }
  void set(TimelineId t, ClockValue c);
  void clear() {  // back to the empty clock, capacity kept
    size_ = 0;
    witness_.reset();
  }
  // Advances this clock's own timeline and returns the new epoch (inline: once per operation).
  Epoch tick(TimelineId own) {
    if (own >= size_) grow(own + 1);
    return Epoch{own, ++mutable_data()[own]};
  }
  // Pointwise maximum; returns whether anything grew (or, with witness sets, changed).
  bool join(const VectorClock& other) {
    if (!witness_ && !other.witness_) [[likely]]
      return join(other.data(), other.size_);
    return join_witnessed(other, {});
  }
  bool join(const ClockValue* v, size_t n);
  // The join along an edge of the synchronisation sites `via` (witness.h); none: a plain join.
  bool join_via(const VectorClock& other, EdgeSites via) {
    return via || witness_ || other.witness_ ? join_witnessed(other, via) : join(other.data(), other.size_);
  }
  // The sites without any one of which this clock would not cover `e` (none when it does not
  // cover `e` at all), appended to `out`.
  void sites_needed_for(Epoch e, std::vector<SiteId>& out) const;
  bool rests_on_sites(Epoch e) const { return witness_ && covers(e) && rests_on_sites_slow(e); }
  // The value of timeline `t` above which an epoch is left unordered or rests on sites: the
  // clock's value, or less where a site's entry says so (along a timeline, the epochs that rest on
  // sites are the covered ones above the lowest `without`).
  ClockValue sites_floor(TimelineId t) const;
  // Does the operation at `e` happen before (or is it) the point this clock describes?
  bool covers(Epoch e) const { return e.clock <= get(e.timeline); }
  // Does this clock know everything `other` knows (pointwise at least as large)?
  bool covers_all(const VectorClock& other) const;
  size_t size() const { return size_; }
  const ClockValue* data() const { return heap_ ? heap_.get() : inline_; }
  bool operator==(const VectorClock& o) const;

 private:
  ClockValue* mutable_data() { return heap_ ? heap_.get() : inline_; }
  void assign(const ClockValue* v, uint32_t n);
  void grow(size_t n);  // to n components, the new ones 0
  void copy_witness(const VectorClock& o);
  bool join_witnessed(const VectorClock& other, EdgeSites via);
  bool rests_on_sites_slow(Epoch e) const;

  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  ClockValue inline_[kInline] = {};
  std::unique_ptr<ClockValue[]> heap_;  // only when capacity_ > kInline
  // Only in the over-synchronisation pass's checks: the sites this clock's knowledge rests on
  // (null: none, which is every clock of an ordinary check).
  std::unique_ptr<Witness> witness_;
};

// Hands out timeline numbers; shared by every rank of one analysis in the dense mode, where
// ranks on several threads create streams at once (hence atomic).
class TimelineRegistry {
 public:
  TimelineId add() { return next_.fetch_add(1, std::memory_order_relaxed); }
  TimelineId count() const { return next_.load(std::memory_order_relaxed); }

 private:
  std::atomic<TimelineId> next_{0};
};

}  // namespace streamhaz::analysis
