// The sharded check's one error for irregular collective input (a call posted again after it
// completed, twice by one communicator rank, ...): the processes' copies of the matcher may
// forget a completed call at different rounds, so on such input they could drift apart.
#pragma once

#include <string>

#include "engine/collective_matcher.h"

namespace streamhaz::analysis {

// What was wrong and where: the trace file, its rank, the call and its operation seq.
std::string describe_irregularity(const Irregularity& what, const std::string& trace_file, int rank);

}  // namespace streamhaz::analysis
