#include "run_rank.hpp"

#include <cuda_runtime.h>

#include <vector>

#include "cuda_check.hpp"
#include "nccl_bootstrap.hpp"
#include "report.hpp"
#include "zero2_step.hpp"

namespace reducer {

int run_rank(const Options& options, const RankEnv& rank) {
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (rank.local_rank >= devices)
    fail("LOCAL_RANK=" + std::to_string(rank.local_rank) + " but only " +
         std::to_string(devices) + " GPU(s) are visible");
  CUDA_CHECK(cudaSetDevice(rank.local_rank));

  ncclComm_t comm =
      init_communicator(rank.rank, rank.world_size, nccl_id_file_path(options.nccl_id_file));
  RunTotals totals;
  std::vector<StepTiming> measured;
  {
    Zero2Step zero2(options, rank, comm);
    for (int step = 0; step < options.steps; ++step) {
      StepResult result = zero2.run(step);
      if (rank.rank == 0) print_step_line(step, result);
      totals.corrupted_here += result.corrupted_here;
      totals.corrupted_all_ranks += result.corrupted_all_ranks;
      totals.corrupted_steps += result.corrupted_all_ranks > 0 ? 1 : 0;
      // With fewer steps than the warm-up, time them all rather than none.
      if (step >= options.warmup || options.steps <= options.warmup)
        measured.push_back(result.timing);
    }
  }
  print_summary_line(options, rank, totals, summarize(measured));
  NCCL_CHECK(ncclCommDestroy(comm));
  return options.expect_clean && totals.corrupted_all_ranks > 0 ? 1 : 0;
}

}  // namespace reducer
