// When the tracer collects GPU start/end times. CUPTI's kernel and copy activity is the largest
// part of the host time tracing adds to a launch (docs/tracer.md, "Overhead"), and the
// happens-before analysis needs none of it, so by default it is sampled: on for a window,
// off for the rest of each period. Every operation and edge is recorded in every mode.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace streamhaz::tracer {

enum class GpuTimes { All, Sampled, Off };

struct TimingPolicy {
  GpuTimes mode = GpuTimes::Sampled;
  std::chrono::milliseconds window{200};   // Sampled: times collected for this long ...
  std::chrono::milliseconds period{2000};  // ... at the start of every period
  // As the trace header and the command line spell it: "all", "off", "sampled:200/2000".
  std::string describe() const;
};

// Windows shorter than this would switch CUPTI more often than it is worth; periods longer
// than a day are no sampling at all (and would overflow a wait in nanoseconds).
constexpr long long kMinWindowMs = 10;
constexpr long long kMaxPeriodMs = 24LL * 3600 * 1000;

// Accepts "all", "off" (or "0"), "sampled" (the default window and period) and
// "sampled:WINDOW_MS/PERIOD_MS" with kMinWindowMs <= WINDOW_MS <= PERIOD_MS <= kMaxPeriodMs;
// a window as long as its period is "all". On error, `why` says what.
std::optional<TimingPolicy> parse_timing_policy(std::string_view text, std::string& why);

// Whether times are collected `since_start` after tracing began.
bool timing_window_open(const TimingPolicy& policy, std::chrono::milliseconds since_start);

// How long from `since_start` until the window opens or closes next (Sampled only).
std::chrono::milliseconds until_next_timing_change(const TimingPolicy& policy, std::chrono::milliseconds since_start);

}  // namespace streamhaz::tracer
