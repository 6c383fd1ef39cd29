// check --memory-limit: a bound on what the analysis may allocate, so that a hostile or huge
// trace ends in one clear error instead of swapping the machine or being killed by the kernel.
#pragma once

#include <cstdint>

namespace streamhaz::cli {

// Sets the process's data limit (RLIMIT_DATA: the heap and private mappings, thread stacks
// included) to `mib` MiB; past it allocations fail, and the analysis stops with "out of memory
// while checking FILE at record N". Throws std::runtime_error when the limit cannot be set.
void limit_memory(uint64_t mib);

}  // namespace streamhaz::cli
