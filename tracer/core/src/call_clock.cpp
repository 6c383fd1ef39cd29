#include "streamhaz/tracer/call_clock.h"

#include <time.h>

#include <algorithm>

namespace streamhaz::tracer {

void CallClock::on_call(uint64_t seq, uint64_t unix_us) {
  last_seq_ = seq;
  if (!samples_.empty() && unix_us <= samples_.back().unix_us) return;
  if (samples_.size() == max_samples_) {
    samples_.erase(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(max_samples_ / 2));
    dropped_ = true;
  }
  samples_.push_back({seq, unix_us});
}

uint64_t CallClock::first_call_at_or_after(uint64_t unix_us) const {
  auto it = std::lower_bound(samples_.begin(), samples_.end(), unix_us,
                             [](const Sample& s, uint64_t t) { return s.unix_us < t; });
  if (it == samples_.end()) return last_seq_ + 1;
  if (it == samples_.begin() && dropped_ && unix_us < it->unix_us) return 0;
  return it->seq;
}

uint64_t unix_time_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000u + uint64_t(ts.tv_nsec) / 1000u;
}

}  // namespace streamhaz::tracer
