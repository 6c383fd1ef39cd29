// The sentence a finding ends with: which wait would have ordered its two operations.
#pragma once

#include <string>

#include "streamhaz/analysis/finding.h"

namespace streamhaz::analysis {

// "compute stream must wait for an event recorded on reduction stream after ncclAllReduce
// (seq 41) before memcpy DtoD (seq 57): cudaEventRecord(ev, reduction stream) after it,
// cudaStreamWaitEvent(compute stream, ev) before it". `host_side`: the later operation is
// done by the host (cudaFree), which must synchronise instead.
std::string missing_order_text(const OpRef& first, const OpRef& second, bool second_on_host);

// "ncclAllReduce", "memcpy DtoD", "kernel reduce_kernel": how sentences name an operation.
std::string op_phrase(const OpRef& op);

}  // namespace streamhaz::analysis
