// Training steps in a trace: the instances of one NVTX range (by default "step"), found from
// the range paths the operations were issued in.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// The operations (by seq) of each instance of range `name`, in issue order. An instance
// starts where the first path seen below the range comes again after other paths (a step's
// first operation is issued directly in it, or in its first sub-range). Empty if no
// operation was issued inside the range.
std::vector<std::vector<uint64_t>> find_steps(const std::vector<trace::Record>& records, const std::string& name);

}  // namespace streamhaz::analysis
