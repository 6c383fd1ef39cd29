// Which rank this process is, and starting one process per GPU when asked to.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace reducer {

struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // selects the GPU
};

// Reads RANK, WORLD_SIZE and LOCAL_RANK as set by torchrun or by launch_ranks; nullopt if
// RANK is not set. Inconsistent values exit with 2.
std::optional<RankEnv> rank_env_from_environment();

// Re-executes this program nproc times with RANK, WORLD_SIZE, LOCAL_RANK and the NCCL id file
// set, waits for all, and returns the exit status to report: the first non-zero one, else 0.
// If a rank fails, the others are terminated so that none hangs in a collective.
int launch_ranks(int nproc, const std::vector<std::string>& argv, const std::string& id_file);

}  // namespace reducer
