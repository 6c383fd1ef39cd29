#include "report.hpp"

#include <cstdio>

namespace reducer {

void print_step_line(int step, const StepResult& result) {
  std::printf("{'step': %d, 'grad_norm': %.6f, 'corrupted': %lld, 'step_ms': %.3f}\n", step,
              result.grad_norm, static_cast<long long>(result.corrupted_all_ranks),
              result.timing.step_ms);
  std::fflush(stdout);
}

void print_summary_line(const Options& options, const RankEnv& rank, const RunTotals& totals,
                        const TimingSummary& timing) {
  std::printf(
      "reducer: rank=%d ranks=%d mode=%s ipg_buffers=%d bug=%s bucket_copy=%s comm=%s comm_delay_us=%lld "
      "steps=%d corrupted_elements=%lld corrupted_elements_all_ranks=%lld corrupted_steps=%d "
      "step_ms=%.3f compute_ms=%.3f comm_ms=%.3f overlap=%.3f\n",
      rank.rank, rank.world_size, to_string(options.sync), options.ipg_buffers,
      to_string(options.bug), to_string(options.bucket_copy), options.reduce_scatter ? "reduce-scatter" : "all-reduce",
      static_cast<long long>(options.comm_delay_us), options.steps,
      static_cast<long long>(totals.corrupted_here),
      static_cast<long long>(totals.corrupted_all_ranks), totals.corrupted_steps,
      timing.step_ms_median, timing.compute_ms_median, timing.comm_ms_median,
      timing.overlap_share);
  std::fflush(stdout);
}

}  // namespace reducer
