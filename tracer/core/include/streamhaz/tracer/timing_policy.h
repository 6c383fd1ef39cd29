// When the tracer collects GPU start/end times. CUPTI's kernel and copy activity is the largest
// part of the host time tracing adds to a launch (docs/tracer.md, "Overhead"), and the
// happens-before analysis needs none of it; the over-synchronisation pass and the replay need
// whole training steps timed. So by default times follow the steps: collection is on from the
// start through the end of the K-th step after the program's first (warm-up) one, a step being an
// outermost instance of the NVTX range STREAMHAZ_STEP_RANGE, and off for good after it. Switching
// CUPTI's activity on again once it was off keeps its per-call cost at the activity price for the
// rest of the run (docs/tracer.md, "Where the tracer's time goes"), so the default never does:
// one step in N after the K (`steps:K/N`) and the sampled windows do, at that price. A program
// without the range has its steps counted from its repeating collectives and host
// synchronisations (pattern_clock.h). A program with neither by first_step_wait has collection
// switched off then and on again for its first timed step, should one come. Every operation and
// edge is recorded in every mode.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace streamhaz::tracer {

enum class GpuTimes { All, Steps, Sampled, Off };

struct TimingPolicy {
  GpuTimes mode = GpuTimes::Steps;
  std::chrono::milliseconds window{200};   // Sampled: times collected for this long ...
  std::chrono::milliseconds period{2000};  // ... at the start of every period
  int timed_steps = 4;    // Steps: steps 2 to 1 + timed_steps (counting from 1) are timed ...
  int then_every = 0;     // ... and after them one step in then_every (0: none)
  std::chrono::seconds first_step_wait{300};  // Steps: on from the start this long if no step begins
  // As the trace header and the command line spell it: "all", "off", "steps:4", "steps:4/50", "sampled:200/2000".
  std::string describe() const;
};

// Windows shorter than this would switch CUPTI more often than it is worth; periods longer
// than a day are no sampling at all (and would overflow a wait in nanoseconds).
constexpr long long kMinWindowMs = 10;
constexpr long long kMaxPeriodMs = 24LL * 3600 * 1000;

// Accepts "all", "off" (or "0"), "steps" (the default count), "steps:K" and "steps:K/N" with K, N >= 1,
// "sampled" (the default window and period) and "sampled:WINDOW_MS/PERIOD_MS" with
// kMinWindowMs <= WINDOW_MS <= PERIOD_MS <= kMaxPeriodMs; a window as long as its period is
// "all". On error, `why` says what.
std::optional<TimingPolicy> parse_timing_policy(std::string_view text, std::string& why);

// Steps: whether step `index` (0 for the first, the warm-up) is timed.
bool step_timed(const TimingPolicy& policy, int index);

// Steps: whether collection closes when step `index` ends. It stays open from the start through
// the warm-up and the first K steps (closing between them would mean switching it on again).
bool closes_after_step(const TimingPolicy& policy, int index);

// Steps, for a program with no step range (pattern_clock.h): how many repeats of its calls'
// pattern cover the warm-up and the K timed steps, wherever in a step the pattern starts. A loop
// inside a step that repeats as often (gradient accumulation's micro-batches, each with a
// collective and a loss read) is taken for the steps: docs/tracer.md says what that costs.
inline int pattern_periods(const TimingPolicy& policy) { return policy.timed_steps + 2; }

// Whether times are collected `since_start` after tracing began (Sampled; All and Off; Steps
// before its first step).
bool timing_window_open(const TimingPolicy& policy, std::chrono::milliseconds since_start);

// How long from `since_start` until the window opens or closes next (Sampled only).
std::chrono::milliseconds until_next_timing_change(const TimingPolicy& policy, std::chrono::milliseconds since_start);

}  // namespace streamhaz::tracer
