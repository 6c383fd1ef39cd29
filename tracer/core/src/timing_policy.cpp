#include "streamhaz/tracer/timing_policy.h"

#include <charconv>

namespace streamhaz::tracer {

std::string TimingPolicy::describe() const {
  switch (mode) {
    case GpuTimes::All: return "all";
    case GpuTimes::Off: return "off";
    case GpuTimes::Steps:
      return "steps:" + std::to_string(timed_steps) + (then_every ? "/" + std::to_string(then_every) : "");
    case GpuTimes::Sampled: break;
  }
  return "sampled:" + std::to_string(window.count()) + "/" + std::to_string(period.count());
}

namespace {

constexpr long long kMaxSteps = 1000000;

bool parse_ms(std::string_view text, long long& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "PREFIX:A/B": whether `text` starts with `prefix`; then `ok` says whether A and B were read.
bool parse_pair(std::string_view text, std::string_view prefix, long long& a, long long& b, bool& ok) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  const std::string_view spec = text.substr(prefix.size());
  const size_t slash = spec.find('/');
  ok = slash != std::string_view::npos && parse_ms(spec.substr(0, slash), a) && parse_ms(spec.substr(slash + 1), b);
  return true;
}

}  // namespace

std::optional<TimingPolicy> parse_timing_policy(std::string_view text, std::string& why) {
  TimingPolicy p;
  if (text == "all") {
    p.mode = GpuTimes::All;
    return p;
  }
  if (text == "off" || text == "0") {
    p.mode = GpuTimes::Off;
    return p;
  }
  if (text == "steps") return p;
  long long timed = 0, every = 0;
  bool ok = false;
  if (constexpr std::string_view kSteps = "steps:"; text.substr(0, kSteps.size()) == kSteps) {
    const std::string_view counts = text.substr(kSteps.size());
    if (counts.find('/') == std::string_view::npos) {
      ok = parse_ms(counts, timed);  // steps:K, no step after the K
    } else {
      parse_pair(text, kSteps, timed, every, ok);
      ok = ok && every >= 1;
    }
    if (!ok || timed < 1 || timed > kMaxSteps || every > kMaxSteps) {
      why = "expected steps:K or steps:K/N (K steps timed after the warm-up one, then one in N; 1 to " +
            std::to_string(kMaxSteps) + "), got '" + std::string(text) + "'";
      return std::nullopt;
    }
    p.timed_steps = static_cast<int>(timed);
    p.then_every = static_cast<int>(every);
    return p;
  }
  p.mode = GpuTimes::Sampled;
  if (text == "sampled") return p;
  long long window = 0, period = 0;
  if (parse_pair(text, "sampled:", window, period, ok)) {
    if (!ok) {
      why = "expected sampled:WINDOW_MS/PERIOD_MS, got '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (window < kMinWindowMs || period < window || period > kMaxPeriodMs) {
      why = "sampled window must be at least " + std::to_string(kMinWindowMs) +
            " ms and no longer than its period, and the period at most " + std::to_string(kMaxPeriodMs) +
            " ms (a day), got '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (window == period) {  // never closes
      p.mode = GpuTimes::All;
      return p;
    }
    p.window = std::chrono::milliseconds(window);
    p.period = std::chrono::milliseconds(period);
    return p;
  }
  why = "GPU times must be all, steps, steps:K/N, sampled, sampled:WINDOW_MS/PERIOD_MS or off, got '" + std::string(text) + "'";
  return std::nullopt;
}

bool step_timed(const TimingPolicy& policy, int index) {
  if (index < 1) return false;
  if (index <= policy.timed_steps) return true;
  return policy.then_every > 0 && (index - policy.timed_steps) % policy.then_every == 0;
}

bool closes_after_step(const TimingPolicy& policy, int index) { return index >= policy.timed_steps; }

bool timing_window_open(const TimingPolicy& policy, std::chrono::milliseconds since_start) {
  switch (policy.mode) {
    case GpuTimes::All: return true;
    case GpuTimes::Off: return false;
    case GpuTimes::Steps: return since_start < policy.first_step_wait;
    case GpuTimes::Sampled: break;
  }
  return since_start % policy.period < policy.window;
}

std::chrono::milliseconds until_next_timing_change(const TimingPolicy& policy, std::chrono::milliseconds since_start) {
  const auto into = since_start % policy.period;
  return into < policy.window ? policy.window - into : policy.period - into;
}

}  // namespace streamhaz::tracer
