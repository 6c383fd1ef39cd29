// Names and derived facts of records.
#include "streamhaz/trace/records.h"

#include <iterator>

namespace streamhaz::trace {
namespace {

constexpr const char* kRecordNames[] = {
    "string", "meta", "host_thread", "stream_create", "stream_name", "event_create", "event_record",
    "event_wait", "event_sync", "event_query", "stream_sync", "stream_query", "device_sync", "kernel",
    "memcpy", "memset", "host_func", "nccl", "alloc", "free", "buffer_name", "access", "capture_begin",
    "capture_end", "graph_launch", "timing", "end", "frame", "module", "callsite", "stack"};
static_assert(std::size(kRecordNames) == kRecordKindCount, "one name per record kind");

}  // namespace

const char* record_name(size_t variant_index) {
  return variant_index < kRecordKindCount ? kRecordNames[variant_index] : "unknown";
}
const char* record_name(const Record& r) { return record_name(r.index()); }

const char* to_string(MemcpyKind k) {
  constexpr const char* names[] = {"HtoH", "HtoD", "DtoH", "DtoD", "default", "peer"};
  return names[static_cast<size_t>(k)];
}

const char* to_string(NcclKind k) {
  constexpr const char* names[] = {"ncclAllReduce", "ncclBroadcast",     "ncclReduce", "ncclAllGather",
                                   "ncclReduceScatter", "ncclSend", "ncclRecv",   "ncclAlltoAll",
                                   "ncclGather",        "ncclScatter"};
  return names[static_cast<size_t>(k)];
}

const char* to_string(AllocKind k) {
  constexpr const char* names[] = {"device", "async", "managed", "host_pinned", "vmm"};
  return names[static_cast<size_t>(k)];
}

const char* to_string(AccessMode m) {
  switch (m) {
    case AccessMode::Read: return "read";
    case AccessMode::Write: return "write";
    case AccessMode::ReadWrite: return "read-write";
  }
  return "unknown";
}

const char* to_string(FootprintTier t) {
  constexpr const char* names[] = {"api", "static", "exact", "annotation", "pointer", "memo", "coarse"};
  static_assert(std::size(names) == kFootprintTierCount);
  return names[static_cast<size_t>(t)];
}

const char* to_string(FrameKind k) {
  switch (k) {
    case FrameKind::Python: return "python";
    case FrameKind::Native: return "native";
  }
  return "unknown";
}

NcclFootprint nccl_footprint(const Nccl& n) {
  // Saturating: a hostile count or nranks must not wrap into a small footprint.
  auto mul = [](uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
  };
  const uint64_t one = mul(n.count, n.elem_bytes);
  const uint64_t all = mul(one, n.nranks);
  const bool root = n.peer >= 0 && static_cast<uint32_t>(n.peer) == n.rank;
  switch (n.kind) {
    case NcclKind::AllReduce: return {one, one};
    case NcclKind::Broadcast: return {root ? one : 0, one};
    case NcclKind::Reduce: return {one, root ? one : 0};
    case NcclKind::AllGather: return {one, all};
    case NcclKind::ReduceScatter: return {all, one};
    case NcclKind::Send: return {one, 0};
    case NcclKind::Recv: return {0, one};
    case NcclKind::AllToAll: return {all, all};
    case NcclKind::Gather: return {one, root ? all : 0};
    case NcclKind::Scatter: return {root ? all : 0, one};
  }
  return {};
}

const OpCommon* op_common(const Record& r) {
  return std::visit(
      [](const auto& rec) -> const OpCommon* {
        if constexpr (requires { rec.op; }) return &rec.op;
        else return nullptr;
      },
      r);
}

uint64_t api_seq(const Record& r) {
  return std::visit(
      [](const auto& rec) -> uint64_t {
        using T = std::decay_t<decltype(rec)>;
        if constexpr (std::is_same_v<T, StackRef>) return 0;
        else if constexpr (requires { rec.seq; }) return rec.seq;
        else if constexpr (requires { rec.op.seq; }) return rec.op.seq;
        else return 0;
      },
      r);
}

}  // namespace streamhaz::trace
