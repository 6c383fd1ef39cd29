#include "streamhaz/tracer/pattern_clock.h"

#include <algorithm>
#include <cstddef>

namespace streamhaz::tracer {

PatternClock::PatternClock(int periods) : keys_(2 * kRing), repeats_(kMaxPeriod + 1), needed_(kMaxPeriod + 1) {
  // The latest tokens form `periods` whole periods of p when the last p of them repeat the p
  // before, (periods - 1) times over.
  const size_t whole = size_t(std::max(periods, 2));
  for (size_t p = 1; p <= kMaxPeriod; ++p) needed_[p] = uint32_t((whole - 1) * p);
}

bool PatternClock::feed(const trace::StepToken& token) {
  if (period_) return false;
  const uint64_t n = count_++;  // this token's index
  // 32 bits of the key, which SSE2 compares four at a time: a step holds tens of distinct calls.
  const uint32_t folded = uint32_t(token.key ^ (token.key >> 32));
  // Newest first: the token p before this one sits p slots after it.
  const size_t slot = kRing - 1 - size_t(n % kRing);
  same_run_ = n > 0 && keys_[slot + 1] == folded ? same_run_ + 1 : 1;
  if (token.host_sync) last_sync_ = n + 1;
  keys_[slot] = keys_[slot + kRing] = folded;
  // Every period's run, without a branch per period (the compiler vectorises it): this runs for
  // every collective and host synchronisation until the pattern is found.
  const size_t longest = size_t(std::min<uint64_t>(n, kMaxPeriod));
  const uint32_t* key = keys_.data() + slot;
  uint32_t* repeats = repeats_.data();
  const uint32_t* needed = needed_.data();
  uint32_t ready = 0;
  for (size_t p = 1; p <= longest; ++p) {
    const uint32_t r = (repeats[p] + 1) & (0u - uint32_t(key[p] == folded));
    repeats[p] = r;
    ready |= uint32_t(r >= needed[p]);
  }
  if (!ready) return false;
  // The shortest period (a multiple of it repeats as well) whose last p tokens are not one call
  // and hold a host synchronisation: p above the tokens since the latest one, and above the
  // latest run of one call.
  if (last_sync_ == 0) return false;
  const uint64_t since_sync = n - (last_sync_ - 1);
  for (size_t p = size_t(std::max<uint64_t>(since_sync, same_run_)) + 1; p <= longest; ++p)
    if (repeats_[p] >= needed_[p]) {
      period_ = p;
      return true;
    }
  return false;
}

}  // namespace streamhaz::tracer
