#include "model/op_stamp.h"

namespace streamhaz::analysis {

const char* op_kind_text(OpKind k) {
  static constexpr const char* memcpy_names[] = {"memcpy HtoH", "memcpy HtoD", "memcpy DtoH",
                                                  "memcpy DtoD", "memcpy", "memcpy peer"};
  const auto v = static_cast<uint8_t>(k);
  if (k == OpKind::Kernel) return "kernel";
  if (v >= uint8_t(OpKind::MemcpyFirst) && v < uint8_t(OpKind::MemsetOp))
    return memcpy_names[v - uint8_t(OpKind::MemcpyFirst)];
  if (k == OpKind::MemsetOp) return "memset";
  if (k == OpKind::HostFuncOp) return "host_func";
  if (v >= uint8_t(OpKind::NcclFirst) && v < uint8_t(OpKind::Free))
    return trace::nccl_facts(static_cast<trace::NcclKind>(v - uint8_t(OpKind::NcclFirst))).api_name;
  if (k == OpKind::Free) return "free";
  if (k == OpKind::FreeAsync) return "free async";
  return "operation";
}

std::string op_api_name(OpKind k, uint8_t flags) {
  const auto v = static_cast<uint8_t>(k);
  const bool sync = flags & kOpSync;
  if (v >= uint8_t(OpKind::MemcpyFirst) && v < uint8_t(OpKind::MemsetOp))
    return sync ? "cudaMemcpy" : "cudaMemcpyAsync";
  if (k == OpKind::MemsetOp) return sync ? "cudaMemset" : "cudaMemsetAsync";
  if (k == OpKind::HostFuncOp) return "cudaLaunchHostFunc";
  if (k == OpKind::Free) return "cudaFree";
  if (k == OpKind::FreeAsync) return "cudaFreeAsync";
  return op_kind_text(k);  // NCCL calls are named by their kind
}

}  // namespace streamhaz::analysis
