// Wall-clock times of the traced API calls, kept only while something will have to place
// events of another clock among them: PyTorch's allocator history stamps each allocation
// with Unix-epoch microseconds, and reaches the tracer only when the process exits.
//
// One sample per call whose microsecond differs from the previous sample's, so a burst of
// calls within one microsecond costs one sample; the oldest half is dropped when the table is
// full (the allocator's history keeps its newest entries too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace streamhaz::tracer {

class CallClock {
 public:
  static constexpr size_t kMaxSamples = size_t(1) << 22;  // 64 MiB
  explicit CallClock(size_t max_samples = kMaxSamples) : max_samples_(max_samples < 2 ? 2 : max_samples) {}

  // The call with sequence number `seq` was made at `unix_us`; seqs come in increasing order.
  // A clock stepped back is read as standing still (the order of the calls is the truth).
  void on_call(uint64_t seq, uint64_t unix_us);

  // The first call made at or after `unix_us`: an event stamped then came before that call.
  // 0 when the event is older than the oldest sample kept after some were dropped (its place
  // is unknown); one past the last call when it came after every call.
  uint64_t first_call_at_or_after(uint64_t unix_us) const;

  size_t samples() const { return samples_.size(); }
  bool dropped_any() const { return dropped_; }

 private:
  struct Sample {
    uint64_t seq;
    uint64_t unix_us;
  };
  size_t max_samples_;
  std::vector<Sample> samples_;
  uint64_t last_seq_ = 0;
  bool dropped_ = false;
};

// CLOCK_REALTIME in microseconds (the clock PyTorch converts its allocator stamps to).
uint64_t unix_time_us();

}  // namespace streamhaz::tracer
