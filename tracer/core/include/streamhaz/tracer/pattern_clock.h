// Training steps of a program without a step range, counted while it runs, so that GPU times
// (timing_policy.h) can end after the steps they time there too. A training loop issues the same
// collectives and host synchronisations in the same order every step (streamhaz/trace/
// step_pattern.h): once the latest tokens repeat with a period, the loop has run that many steps.
// A period counts only if its tokens are not one call repeated (initialisations are full of
// those: NCCL's set-up synchronises one stream dozens of times) and hold a host synchronisation (a
// step ends waiting for its loss; a parameter broadcast per layer has none). The analyzer finds
// the steps again afterwards, in the whole trace; here only "enough steps have passed" is asked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "streamhaz/trace/step_pattern.h"

namespace streamhaz::tracer {

class PatternClock {
 public:
  // Tokens a step: a loop with more between its repeats is not found (nor costs more than this
  // many comparisons a token).
  static constexpr size_t kMaxPeriod = 1024;

  // `periods`: how many whole repeats of the pattern make "enough" (at least 2).
  explicit PatternClock(int periods);

  // The next token, in the program's order. True once: at the token that completes `periods`
  // repeats of a pattern; period() then says how many tokens it repeats.
  bool feed(const trace::StepToken& token);
  size_t period() const { return period_; }

 private:
  static constexpr size_t kRing = 2 * kMaxPeriod;  // a power of two above kMaxPeriod
  std::vector<uint32_t> keys_;     // the last kRing tokens' keys, newest first, twice over: the
                                   // kMaxPeriod before a token follow it in one run
  std::vector<uint32_t> repeats_;  // [p]: how many of the latest tokens equal the one p before
  std::vector<uint32_t> needed_;   // [p]: the repeats that make `periods` whole periods of p
  uint64_t count_ = 0;             // tokens fed
  uint64_t same_run_ = 0;          // the latest tokens that are one call
  uint64_t last_sync_ = 0;         // 1 + the index of the latest host synchronisation (0: none)
  size_t period_ = 0;              // found: stops counting
};

}  // namespace streamhaz::tracer
