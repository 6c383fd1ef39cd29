// Names and derived facts of records.
#include "streamhaz/trace/records.h"

#include <iterator>

namespace streamhaz::trace {
namespace {

constexpr const char* kRecordNames[] = {
    "string", "meta", "host_thread", "stream_create", "stream_name", "event_create", "event_record",
    "event_wait", "event_sync", "event_query", "stream_sync", "stream_query", "device_sync", "kernel",
    "memcpy", "memset", "host_func", "nccl", "alloc", "free", "buffer_name", "access", "capture_begin",
    "capture_end", "graph_launch", "timing", "end", "frame", "module", "callsite", "stack", "range", "tensor_alloc"};
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

const char* to_string(NcclKind k) { return nccl_facts(k).api_name; }

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

const char* to_string(FootprintTier t) { return tier_facts(t).name; }

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
  const bool root = n.peer >= 0 && static_cast<uint32_t>(n.peer) == n.rank;
  auto bytes = [&](NcclExtent e) -> uint64_t {
    switch (e) {
      case NcclExtent::None: return 0;
      case NcclExtent::One: return one;
      case NcclExtent::All: return mul(one, n.nranks);
      case NcclExtent::RootOne: return root ? one : 0;
      case NcclExtent::RootAll: return root ? mul(one, n.nranks) : 0;
    }
    return 0;
  };
  const NcclKindFacts& f = nccl_facts(n.kind);
  return {bytes(f.read), bytes(f.write)};
}

}  // namespace streamhaz::trace
