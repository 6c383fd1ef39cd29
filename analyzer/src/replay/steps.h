// Training steps in a trace: the instances of one NVTX range (by default "step"), found from
// the range paths the operations were issued in.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// The operations (by seq) of each instance of the outermost range `name`, in issue order. An
// instance starts where the first sub-range seen directly below it (or the range itself, for
// operations issued in it) comes again after others, or after operations outside the range.
// Ranges nested deeper, a framework's own included, never start an instance. Empty if no
// operation was issued inside the range.
std::vector<std::vector<uint64_t>> find_steps(const std::vector<trace::Record>& records, const std::string& name);

}  // namespace streamhaz::analysis
