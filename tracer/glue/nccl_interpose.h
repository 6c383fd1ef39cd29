// NCCL interposition through LD_PRELOAD: the tracer exports ncclAllReduce & co., records the
// call and forwards to the real NCCL, found with dlsym(RTLD_NEXT) or, where the program
// loaded NCCL in a local scope (PyTorch), through dlopen("libnccl.so.2", RTLD_NOLOAD).
#pragma once

#include <cstdint>
#include <optional>

#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer::glue {

// Rank and size of a communicator whose init the tracer did not see.
std::optional<CommInfo> query_comm(uint64_t comm);

}  // namespace streamhaz::tracer::glue
