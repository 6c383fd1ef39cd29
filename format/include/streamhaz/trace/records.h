// The records of a streamhaz trace: the one definition shared by the tracer's writer and
// the analyzer's reader. docs/trace-format.md describes the file layout and encoding.
//
// Every API-level record carries `seq`, a per-process sequence number taken at API entry,
// so records of one file are in the order the program issued them. Ids (streams, events,
// strings) are dense numbers the tracer assigns; 0 means "none" for strings.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

namespace streamhaz::trace {

// Version 2 added FootprintTier::Pointer, version 3 the call-stack records (FrameDef, ModuleDef,
// CallsiteDef, StackRef), version 4 compressed chunks, version 5 RangeEdge, version 6
// TensorAlloc; older traces are read as they are.
inline constexpr uint32_t kFormatVersion = 6;

using StringId = uint32_t;  // 0: no string
using StreamId = uint32_t;
using EventId = uint32_t;
using GraphId = uint64_t;
using FrameId = uint32_t;     // 0: none
using CallsiteId = uint32_t;  // 0: no stack
using ModuleId = uint32_t;    // 0: none

// What every operation enqueued on a stream has in common.
struct OpCommon {
  uint64_t seq = 0;
  StreamId stream = 0;
  StringId nvtx = 0;  // innermost NVTX range path of the issuing host thread ("a/b/c"), 0: none
  bool operator==(const OpCommon&) const = default;
};

// Interned text: kernel names, stream and buffer names, NVTX range paths.
struct StringDef {
  StringId id = 0;
  std::string text;
  bool operator==(const StringDef&) const = default;
};

// Metadata learned after the header was written (NCCL version, device names...): a JSON
// object whose keys are merged into the header by the reader.
struct Meta {
  std::string json;
  bool operator==(const Meta&) const = default;
};

// The API calls that follow come from this host thread (written when the thread changes).
struct HostThread {
  uint64_t tid = 0;
  bool operator==(const HostThread&) const = default;
};

enum StreamFlags : uint32_t {
  kStreamNonBlocking = 1,     // cudaStreamNonBlocking: exempt from legacy-stream sync
  kStreamLegacyDefault = 2,   // handle 0 / cudaStreamLegacy of a device
  kStreamPerThreadDefault = 4 // cudaStreamPerThread of one host thread
};

struct StreamCreate {
  uint64_t seq = 0;
  StreamId stream = 0;
  uint32_t device = 0;
  uint32_t flags = 0;  // StreamFlags
  int32_t priority = 0;
  uint64_t handle = 0;  // the CUstream value, for humans
  bool operator==(const StreamCreate&) const = default;
};

struct StreamName {
  StreamId stream = 0;
  StringId name = 0;
  bool operator==(const StreamName&) const = default;
};

struct EventCreate {
  EventId event = 0;
  uint32_t flags = 0;  // cudaEvent* flags as given
  bool operator==(const EventCreate&) const = default;
};

struct EventRecord {
  uint64_t seq = 0;
  EventId event = 0;
  StreamId stream = 0;
  bool operator==(const EventRecord&) const = default;
};

struct EventWait {  // cudaStreamWaitEvent(stream, event)
  uint64_t seq = 0;
  StreamId stream = 0;
  EventId event = 0;
  bool operator==(const EventWait&) const = default;
};

struct EventSync {  // cudaEventSynchronize
  uint64_t seq = 0;
  EventId event = 0;
  bool operator==(const EventSync&) const = default;
};

struct EventQuery {
  uint64_t seq = 0;
  EventId event = 0;
  bool complete = false;  // cudaSuccess; cudaErrorNotReady gives false
  bool operator==(const EventQuery&) const = default;
};

struct StreamSync {
  uint64_t seq = 0;
  StreamId stream = 0;
  bool operator==(const StreamSync&) const = default;
};

struct StreamQuery {
  uint64_t seq = 0;
  StreamId stream = 0;
  bool complete = false;
  bool operator==(const StreamQuery&) const = default;
};

struct DeviceSync {  // cudaDeviceSynchronize / cuCtxSynchronize
  uint64_t seq = 0;
  uint32_t device = 0;
  bool operator==(const DeviceSync&) const = default;
};

struct Kernel {
  OpCommon op;
  StringId name = 0;  // mangled
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_mem = 0;
  std::string params;  // raw parameter bytes, only where footprints need them
  bool operator==(const Kernel&) const = default;
};

enum class MemcpyKind : uint8_t { HostToHost, HostToDevice, DeviceToHost, DeviceToDevice, Default, Peer };
inline constexpr uint8_t kMemcpyKindCount = 6;

enum MemFlags : uint32_t {
  kMemSync = 1,          // the non-Async API: issued on the legacy stream, may block the host
  kMemPageableHost = 2,  // the host side is pageable (not pinned) memory
};

// Copies `width` bytes per row, `rows` rows (1 for plain copies); pitches apply when rows > 1.
struct Memcpy {
  OpCommon op;
  uint64_t dst = 0;
  uint64_t src = 0;
  uint64_t width = 0;
  uint64_t rows = 1;
  uint64_t dst_pitch = 0;
  uint64_t src_pitch = 0;
  MemcpyKind kind = MemcpyKind::DeviceToDevice;
  uint32_t flags = 0;  // MemFlags
  bool operator==(const Memcpy&) const = default;
};

struct Memset {
  OpCommon op;
  uint64_t dst = 0;
  uint64_t width = 0;  // bytes per row
  uint64_t rows = 1;
  uint64_t pitch = 0;
  uint32_t value = 0;
  uint32_t flags = 0;  // MemFlags
  bool operator==(const Memset&) const = default;
};

struct HostFunc {  // cudaLaunchHostFunc / cuLaunchHostFunc
  OpCommon op;
  bool operator==(const HostFunc&) const = default;
};

// Who a rank receives data from in an NCCL call (the cross-rank order the analyzer adds), and how
// many bytes of a buffer a call touches: `count` elements (One), `nranks` times that (All), or
// either only on the root rank (RootOne, RootAll).
enum class NcclReceives : uint8_t { FromEveryone, FromRoot, RootFromEveryone, FromPeer, Nothing };
enum class NcclExtent : uint8_t { None, One, All, RootOne, RootAll };

// Every NCCL call kind, one row each: enumerator, the API's name, a short name (timelines), who
// receives from whom, and the extent read from sendbuf and written to recvbuf. To add a kind, add
// a row: the enumeration, the names, the footprint (nccl_footprint) and the analyzer's receive
// rule (collective_matcher) all come from it, so nothing else needs to change, and no consumer
// may give a kind a rule of its own (a default that granted order would hide races).
#define STREAMHAZ_NCCL_KINDS(X)                                                                  \
  X(AllReduce, "ncclAllReduce", "AllReduce", FromEveryone, One, One)                             \
  X(Broadcast, "ncclBroadcast", "Broadcast", FromRoot, RootOne, One)                             \
  X(Reduce, "ncclReduce", "Reduce", RootFromEveryone, One, RootOne)                              \
  X(AllGather, "ncclAllGather", "AllGather", FromEveryone, One, All)                             \
  X(ReduceScatter, "ncclReduceScatter", "ReduceScatter", FromEveryone, All, One)                 \
  X(Send, "ncclSend", "Send", Nothing, One, None)                                                \
  X(Recv, "ncclRecv", "Recv", FromPeer, None, One)                                               \
  X(AllToAll, "ncclAlltoAll", "AlltoAll", FromEveryone, All, All)                                \
  X(Gather, "ncclGather", "Gather", RootFromEveryone, One, RootAll)                              \
  X(Scatter, "ncclScatter", "Scatter", FromRoot, RootAll, One)

enum class NcclKind : uint8_t {
#define STREAMHAZ_NCCL_ENUMERATOR(kind, api, short_name, receives, read, write) kind,
  STREAMHAZ_NCCL_KINDS(STREAMHAZ_NCCL_ENUMERATOR)
#undef STREAMHAZ_NCCL_ENUMERATOR
};

struct NcclKindFacts {
  const char* api_name;    // "ncclAlltoAll": as NCCL spells it, in findings and SARIF
  const char* short_name;  // "AlltoAll": timeline labels
  NcclReceives receives;
  NcclExtent read;   // from sendbuf
  NcclExtent write;  // to recvbuf
};
inline constexpr NcclKindFacts kNcclKinds[] = {
#define STREAMHAZ_NCCL_FACTS(kind, api, short_name, receives, read, write) \
  {api, short_name, NcclReceives::receives, NcclExtent::read, NcclExtent::write},
    STREAMHAZ_NCCL_KINDS(STREAMHAZ_NCCL_FACTS)
#undef STREAMHAZ_NCCL_FACTS
};
inline constexpr uint8_t kNcclKindCount = sizeof(kNcclKinds) / sizeof(kNcclKinds[0]);
// Only kinds of the table exist: a value read from a trace is checked against the count first.
inline constexpr const NcclKindFacts& nccl_facts(NcclKind k) { return kNcclKinds[static_cast<uint8_t>(k)]; }

struct Nccl {
  OpCommon op;
  NcclKind kind = NcclKind::AllReduce;
  uint64_t sendbuf = 0;
  uint64_t recvbuf = 0;
  uint64_t count = 0;  // elements, as passed to the call
  uint8_t dtype = 0;   // ncclDataType_t
  uint8_t elem_bytes = 4;
  uint8_t redop = 0;
  int32_t peer = -1;   // root for rooted collectives, peer for send/recv
  uint64_t comm = 0;   // communicator hash, equal on every rank
  uint32_t rank = 0;
  uint32_t nranks = 1;
  uint64_t comm_seq = 0;  // per-communicator sequence number of this call
  bool operator==(const Nccl&) const = default;
};

enum class AllocKind : uint8_t { Device, Async, Managed, HostPinned, Vmm };
inline constexpr uint8_t kAllocKindCount = 5;

struct Alloc {
  uint64_t seq = 0;
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  uint32_t device = 0;
  AllocKind kind = AllocKind::Device;
  StreamId stream = 0;  // for Async: the stream the allocation is ordered on
  bool operator==(const Alloc&) const = default;
};

struct Free {
  uint64_t seq = 0;
  uint64_t ptr = 0;
  AllocKind kind = AllocKind::Device;
  StreamId stream = 0;  // for Async
  bool operator==(const Free&) const = default;
};

// A program-given name for a byte range (annotation header or NVTX memory naming).
struct BufferName {
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  StringId name = 0;
  bool operator==(const BufferName&) const = default;
};

enum class AccessMode : uint8_t { Read = 1, Write = 2, ReadWrite = 3 };
// Where a kernel's Access came from. Pointer: a launch argument that points into a traced
// allocation; extent and direction unknown (`bytes` is 0), so it can only make possible findings.
// Memo: the exact tier's footprint of an earlier, identical launch (same function, grid, block
// and argument bytes), reused without instrumenting this one (docs/footprints.md).
// Coarse: the exact tier's footprint of a launch that touched more than its 128-byte table holds
// (1 GiB): ranges of 32 KiB granules it touched, cut at the allocations the tracer knows.
//
// One row per tier: enumerator (its value is on disk: append rows only), name, precision (a
// finding takes the weaker tier of its two operations), the place in check's coverage summary
// (0: pointer, counted apart as "pointer only"), and whether its ranges are exact byte ranges.
// To add a tier, add a row; every consumer reads the row.
#define STREAMHAZ_FOOTPRINT_TIERS(X)      \
  X(Api, "api", 6, 6, true)               \
  X(Static, "static", 1, 4, false)        \
  X(Exact, "exact", 5, 1, true)           \
  X(Annotation, "annotation", 4, 5, true) \
  X(Pointer, "pointer", 0, 0, false)      \
  X(Memo, "memo", 3, 2, true)             \
  X(Coarse, "coarse", 2, 3, false)

enum class FootprintTier : uint8_t {
#define STREAMHAZ_TIER_ENUMERATOR(tier, name, precision, coverage, exact) tier,
  STREAMHAZ_FOOTPRINT_TIERS(STREAMHAZ_TIER_ENUMERATOR)
#undef STREAMHAZ_TIER_ENUMERATOR
};
struct FootprintTierFacts {
  const char* name;
  uint8_t precision;       // higher: stronger evidence
  uint8_t coverage_order;  // 1 first in check's summary; 0: not listed among the others
  bool exact_ranges;
};
inline constexpr FootprintTierFacts kFootprintTiers[] = {
#define STREAMHAZ_TIER_FACTS(tier, name, precision, coverage, exact) {name, precision, coverage, exact},
    STREAMHAZ_FOOTPRINT_TIERS(STREAMHAZ_TIER_FACTS)
#undef STREAMHAZ_TIER_FACTS
};
inline constexpr uint8_t kFootprintTierCount = sizeof(kFootprintTiers) / sizeof(kFootprintTiers[0]);
inline constexpr const FootprintTierFacts& tier_facts(FootprintTier t) { return kFootprintTiers[static_cast<uint8_t>(t)]; }

// Bytes a kernel reads or writes, when known from a footprint tier beyond the API one;
// follows the Kernel record it belongs to.
struct Access {
  uint64_t op_seq = 0;
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  AccessMode mode = AccessMode::Read;
  FootprintTier tier = FootprintTier::Annotation;
  bool operator==(const Access&) const = default;
};

struct CaptureBegin {
  uint64_t seq = 0;
  StreamId stream = 0;
  GraphId graph = 0;  // the graph being captured into
  bool operator==(const CaptureBegin&) const = default;
};

struct CaptureEnd {
  uint64_t seq = 0;
  StreamId stream = 0;
  GraphId graph = 0;
  bool operator==(const CaptureEnd&) const = default;
};

struct GraphLaunch {
  OpCommon op;
  GraphId graph = 0;  // the captured graph the launched executable was instantiated from
  bool operator==(const GraphLaunch&) const = default;
};

// GPU execution interval of an operation (CUPTI activity, joined by correlation id).
struct Timing {
  uint64_t op_seq = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool operator==(const Timing&) const = default;
};

// Written once by a clean close: a trace without it was cut off.
struct End {
  uint64_t records = 0;  // records before this one
  bool operator==(const End&) const = default;
};

// --- Call stacks (version 3) ----------------------------------------------------------------
// Where the program issued an API call: interned frames, a call-site tree over them, and one
// StackRef per API record that has a stack. Ids are per file, defined before first use.

enum class FrameKind : uint8_t { Python = 1, Native = 2 };
inline constexpr uint8_t kFrameKindLimit = 3;  // one past the largest FrameKind

// A code location. Python frames carry file, function and line as the interpreter knew them.
// Native frames carry their module and the offset of the return address in it (pc - base);
// file/function/line stay 0 in the trace and come from symbolising offline.
struct FrameDef {
  FrameId id = 0;
  FrameKind kind = FrameKind::Python;
  StringId file = 0;
  StringId function = 0;
  uint32_t line = 0;
  ModuleId module = 0;
  uint64_t offset = 0;
  bool operator==(const FrameDef&) const = default;
};

// A loaded object of the traced process, for native frames (written before the first frame in it).
struct ModuleDef {
  ModuleId id = 0;
  StringId path = 0;      // as mapped (absolute path of the .so / executable)
  uint64_t base = 0;      // load address (dlpi_addr)
  uint64_t size = 0;
  StringId build_id = 0;  // lowercase hex of NT_GNU_BUILD_ID; 0: none
  bool operator==(const ModuleDef&) const = default;
};

// A node of the call-site tree: `frame` called from `parent` (0: outermost). A stack is named by
// its innermost call site. Written before first use.
struct CallsiteDef {
  CallsiteId id = 0;
  CallsiteId parent = 0;
  FrameId frame = 0;
  bool operator==(const CallsiteDef&) const = default;
};

// The call stack of the API record with sequence number `seq` (operations, Alloc/Free,
// StreamCreate, EventRecord/EventWait, the synchronizations). Written right after that record
// (for the exact tier, after the kernel's Access records).
struct StackRef {
  uint64_t seq = 0;
  CallsiteId callsite = 0;
  bool operator==(const StackRef&) const = default;
};

// An NVTX range pushed (`push`) or popped by the thread of the HostThread record before it;
// `path` is the range's full path ("step/backward"). Operations between a push and its pop, on
// any thread, were issued while the range was open: how steps are told apart (version 5).
struct RangeEdge {
  uint64_t seq = 0;
  StringId path = 0;
  bool push = true;
  bool operator==(const RangeEdge&) const = default;
};

// A block a caching allocator handed to a tensor, from the allocator's own history (PyTorch's
// allocator history, recorded with `streamhaz run --allocator-history on`): its bytes, device,
// the stream it was allocated for (the CUstream value, 0: the legacy default stream) and the
// stack that asked for it (Python frames, in the same call-site tree as the API records'). The
// history reaches the tracer when the process exits, so these records come last; `before_seq`
// places the allocation among the API calls: it came before the call with that seq and after
// the one before it (0: before the first call the tracer could place it by) (version 6).
struct TensorAlloc {
  uint64_t before_seq = 0;
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  uint32_t device = 0;
  uint64_t stream = 0;
  CallsiteId callsite = 0;
  bool operator==(const TensorAlloc&) const = default;
};

// The on-disk tag of a record is its variant index + 1: new kinds are appended, so the tags of
// older versions keep their meaning.
using Record = std::variant<StringDef, Meta, HostThread, StreamCreate, StreamName, EventCreate,
                            EventRecord, EventWait, EventSync, EventQuery, StreamSync, StreamQuery,
                            DeviceSync, Kernel, Memcpy, Memset, HostFunc, Nccl, Alloc, Free,
                            BufferName, Access, CaptureBegin, CaptureEnd, GraphLaunch, Timing, End,
                            FrameDef, ModuleDef, CallsiteDef, StackRef, RangeEdge, TensorAlloc>;

// The on-disk tag of a record is its variant index + 1.
inline constexpr uint8_t kRecordKindCount = std::variant_size_v<Record>;

const char* record_name(const Record& r);
const char* record_name(size_t variant_index);
const char* to_string(MemcpyKind k);
const char* to_string(NcclKind k);
const char* to_string(AllocKind k);
const char* to_string(AccessMode m);
const char* to_string(FootprintTier t);
const char* to_string(FrameKind k);

// Bytes an NCCL call reads from sendbuf and writes to recvbuf (docs/analysis.md, "Footprints", tier 1).
struct NcclFootprint {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  bool operator==(const NcclFootprint&) const = default;
};
NcclFootprint nccl_footprint(const Nccl& n);

// Does this record describe an operation on a stream (and so carry OpCommon)?
// Inline, as api_seq below: the analyzer asks it of every record it reads.
inline const OpCommon* op_common(const Record& r) {
  return std::visit(
      [](const auto& rec) -> const OpCommon* {
        if constexpr (requires { rec.op; }) return &rec.op;
        else return nullptr;
      },
      r);
}

// Records that only say where the program was (frames, modules, call sites, stack references):
// they order nothing, and a StackRef's `seq` names another record's call, not a call of its own.
inline bool is_stack_record(const Record& r) {
  return std::holds_alternative<FrameDef>(r) || std::holds_alternative<ModuleDef>(r) ||
         std::holds_alternative<CallsiteDef>(r) || std::holds_alternative<StackRef>(r);
}

// The sequence number of the API call a record is (0 for records that are no call: strings,
// names, accesses, timings, stack records).
inline uint64_t api_seq(const Record& r) {
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
