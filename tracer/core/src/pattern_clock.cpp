#include "streamhaz/tracer/pattern_clock.h"

#include <algorithm>

namespace streamhaz::tracer {

PatternClock::PatternClock(int periods)
    : periods_(size_t(std::max(periods, 2))), keys_(kRing), repeats_(kMaxPeriod + 1) {}

bool PatternClock::feed(const trace::StepToken& token) {
  if (period_) return false;
  const uint64_t n = count_;  // this token's index
  same_run_ = n > 0 && keys_[(n - 1) % kRing] == token.key ? same_run_ + 1 : 1;
  if (token.host_sync) last_sync_ = n + 1;
  keys_[n % kRing] = token.key;
  ++count_;
  const size_t longest = size_t(std::min<uint64_t>(n, kMaxPeriod));
  size_t found = 0;
  for (size_t p = 1; p <= longest; ++p) {
    uint32_t& r = repeats_[p];
    r = keys_[(n - p) % kRing] == token.key ? r + 1 : 0;
    // The latest tokens form `periods_` whole periods of p: the last p of them repeat the p
    // before, (periods_ - 1) times over.
    if (found || r < (periods_ - 1) * p) continue;
    const bool one_call = same_run_ >= p;
    const bool holds_sync = last_sync_ > 0 && n - (last_sync_ - 1) < p;
    if (!one_call && holds_sync) found = p;  // the shortest: a multiple of it repeats as well
  }
  if (!found) return false;
  period_ = found;
  return true;
}

}  // namespace streamhaz::tracer
