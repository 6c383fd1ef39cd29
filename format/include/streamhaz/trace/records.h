// The records of a streamhaz trace: the one definition shared by the tracer's writer and
// the analyzer's reader. docs/trace-format.md describes the file layout and encoding.
//
// Every API-level record carries `seq`, a per-process sequence number taken at API entry,
// so records of one file are in the order the program issued them. Ids (streams, events,
// strings) are dense numbers the tracer assigns; 0 means "none" for strings.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace streamhaz::trace {

// Version 2 added FootprintTier::Pointer; version-1 traces are read as they are.
inline constexpr uint32_t kFormatVersion = 2;

using StringId = uint32_t;  // 0: no string
using StreamId = uint32_t;
using EventId = uint32_t;
using GraphId = uint64_t;

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

enum class NcclKind : uint8_t {
  AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, Send, Recv, AllToAll, Gather, Scatter
};
inline constexpr uint8_t kNcclKindCount = 10;

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
enum class FootprintTier : uint8_t { Api, Static, Exact, Annotation, Pointer };
inline constexpr uint8_t kFootprintTierCount = 5;

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

using Record = std::variant<StringDef, Meta, HostThread, StreamCreate, StreamName, EventCreate,
                            EventRecord, EventWait, EventSync, EventQuery, StreamSync, StreamQuery,
                            DeviceSync, Kernel, Memcpy, Memset, HostFunc, Nccl, Alloc, Free,
                            BufferName, Access, CaptureBegin, CaptureEnd, GraphLaunch, Timing, End>;

// The on-disk tag of a record is its variant index + 1.
inline constexpr uint8_t kRecordKindCount = std::variant_size_v<Record>;

const char* record_name(const Record& r);
const char* record_name(size_t variant_index);
const char* to_string(MemcpyKind k);
const char* to_string(NcclKind k);
const char* to_string(AllocKind k);
const char* to_string(AccessMode m);
const char* to_string(FootprintTier t);

// Bytes an NCCL call reads from sendbuf and writes to recvbuf (docs/analysis.md, "Footprints", tier 1).
struct NcclFootprint {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  bool operator==(const NcclFootprint&) const = default;
};
NcclFootprint nccl_footprint(const Nccl& n);

// Does this record describe an operation on a stream (and so carry OpCommon)?
const OpCommon* op_common(const Record& r);

}  // namespace streamhaz::trace
