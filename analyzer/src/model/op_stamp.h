// OpStamp: what the shadow memory keeps of an operation that touched some bytes: its epoch
// for the happens-before test and just enough to name it in a finding (32 bytes, no text).
#pragma once

#include <cstdint>
#include <string>

#include "clock/vector_clock.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// What kind of operation; memcpy and NCCL kinds are folded in so one byte says it all.
enum class OpKind : uint8_t {
  Kernel,
  MemcpyFirst,  // + trace::MemcpyKind
  MemsetOp = MemcpyFirst + trace::kMemcpyKindCount,
  HostFuncOp,
  NcclFirst,  // + trace::NcclKind
  Free = NcclFirst + trace::kNcclKindCount,
  FreeAsync,
};

inline OpKind memcpy_op_kind(trace::MemcpyKind k) {
  return static_cast<OpKind>(static_cast<uint8_t>(OpKind::MemcpyFirst) + static_cast<uint8_t>(k));
}
inline OpKind nccl_op_kind(trace::NcclKind k) {
  return static_cast<OpKind>(static_cast<uint8_t>(OpKind::NcclFirst) + static_cast<uint8_t>(k));
}

enum OpFlags : uint8_t {
  kOpSync = 1,      // the blocking API variant (cudaMemcpy, cudaMemset)
  kOpInGraph = 2,   // captured into a graph, ran at a graph launch
  kOpHostSide = 4,  // performed by the host (cudaFree)
  kOpPointerFallback = 8,  // pointer arguments a stronger footprint of the kernel does not cover
  kOpLastingPhantom = 16,  // the over-synchronisation pass's fence (Phantoms::latest keeps it)
  kOpPhantom = 32,         // any of the pass's phantoms, as a cell keeps it (ShadowCell::phantoms)
};

struct OpStamp {
  uint64_t seq = 0;           // 0: no operation
  Epoch epoch;
  uint32_t stream_slot = 0;   // the rank engine's stream slot
  trace::StringId name = 0;   // kernel name; 0 for API operations
  trace::StringId nvtx = 0;
  OpKind kind = OpKind::Kernel;
  trace::FootprintTier tier = trace::FootprintTier::Api;
  uint8_t flags = 0;
  bool exact = true;

  bool valid() const { return seq != 0; }
  bool operator==(const OpStamp& o) const { return seq == o.seq && epoch == o.epoch; }
};
static_assert(sizeof(OpStamp) <= 32);

// "kernel", "memcpy DtoD", "memset", "ncclAllReduce", "host_func", "free"...
const char* op_kind_text(OpKind k);
// The API call: "cudaMemcpyAsync", "cudaMemset", "ncclAllReduce", "cudaFree"...
std::string op_api_name(OpKind k, uint8_t flags);

}  // namespace streamhaz::analysis
