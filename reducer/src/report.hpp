// What the reducer prints: a DeepSpeed-style line per step on rank 0 and one machine-readable
// summary line per rank.
#pragma once

#include <cstdint>

#include "launcher.hpp"
#include "options.hpp"
#include "step_timing.hpp"
#include "zero2_step.hpp"

namespace reducer {

// {'step': 2, 'grad_norm': 3712.5, 'corrupted': 0, 'step_ms': 1.234}
// corrupted: elements of the reduced gradient that differ from the exact value, all ranks.
void print_step_line(int step, const StepResult& result);

struct RunTotals {
  std::int64_t corrupted_here = 0;
  std::int64_t corrupted_all_ranks = 0;
  int corrupted_steps = 0;
};

// reducer: rank=0 ranks=2 mode=event ... corrupted_elements=0 step_ms=1.234 overlap=0.712
void print_summary_line(const Options& options, const RankEnv& rank, const RunTotals& totals,
                        const TimingSummary& timing);

}  // namespace reducer
