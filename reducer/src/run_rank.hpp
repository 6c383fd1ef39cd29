// The life of one rank: GPU selection, communicator, the steps, the report.
#pragma once

#include "launcher.hpp"
#include "options.hpp"

namespace reducer {

// Returns the process exit status: 0, or 1 under --expect-clean when corruption was found.
int run_rank(const Options& options, const RankEnv& rank);

}  // namespace reducer
