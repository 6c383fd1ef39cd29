// TraceBuilder: a few lines of C++ describe a run (ranks, streams, events, operations with
// byte ranges and durations, NCCL calls, syncs, allocations) and write real trace files
// through the same writer the tracer uses. Tests, benchmarks and examples use it.
//
//   TraceBuilder run(2);                       // two ranks
//   auto& r0 = run.rank(0);
//   StreamId compute = r0.stream("compute stream"), comm = r0.stream("reduction stream");
//   uint64_t buf = r0.alloc(4096, "ipg_buffer[0]");
//   r0.memcpy(compute, buf, src, 4096);
//   r0.all_reduce(comm, buf, buf, 1024, run.comm(1));
//   run.write_dir("out");                      // out/rank0.shz, out/rank1.shz
//
// GPU timestamps are simulated: every API call takes 1 µs of host time, an operation starts
// when its stream is free, the host has issued it and the events it waits for have fired.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "streamhaz/trace/records.h"
#include "streamhaz/trace/writer.h"

namespace streamhaz::trace {

struct KernelAccess {
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  AccessMode mode = AccessMode::Read;
  std::optional<FootprintTier> tier;  // the kernel's tier unless set
};
inline KernelAccess reads(uint64_t ptr, uint64_t bytes) { return {ptr, bytes, AccessMode::Read, {}}; }
inline KernelAccess writes(uint64_t ptr, uint64_t bytes) { return {ptr, bytes, AccessMode::Write, {}}; }
inline KernelAccess reads_writes(uint64_t ptr, uint64_t bytes) { return {ptr, bytes, AccessMode::ReadWrite, {}}; }
// A launch argument pointing at `ptr` (pointer tier: extent and direction unknown).
// A pointer-tier argument; `role` Read or Write where a calling convention gives the direction
// (the tracer's operand_roles.h), ReadWrite when it is unknown.
inline KernelAccess pointer_arg(uint64_t ptr, AccessMode role = AccessMode::ReadWrite) {
  return {ptr, 0, role, FootprintTier::Pointer};
}

// One frame of a stack given to the builder. Python frames: file, line, function. Native
// frames: the module (from RankTraceBuilder::module) and the return address's offset in it.
struct BuilderFrame {
  FrameKind kind = FrameKind::Python;
  std::string file;
  uint32_t line = 0;
  std::string function;
  ModuleId module = 0;
  uint64_t offset = 0;
};
inline BuilderFrame py(std::string file, uint32_t line, std::string function) {
  return {FrameKind::Python, std::move(file), line, std::move(function), 0, 0};
}
inline BuilderFrame native(ModuleId module, uint64_t offset) { return {FrameKind::Native, {}, 0, {}, module, offset}; }

class RankTraceBuilder {
 public:
  // With `stream_to_path`, records go straight to that file (for traces too big to hold).
  RankTraceBuilder(int rank, int world_size, std::string stream_to_path = {});

  // Streams. Named streams are created non-blocking unless asked otherwise.
  StreamId stream(const std::string& name, bool non_blocking = true, int priority = 0);
  StreamId legacy_stream();      // handle 0 of the device: synchronises with blocking streams
  StreamId per_thread_stream();  // cudaStreamPerThread of the current host thread

  // Memory. Addresses are handed out 256-byte aligned from a fake device heap.
  uint64_t alloc(uint64_t bytes, const std::string& name = {}, AllocKind kind = AllocKind::Device,
                 StreamId stream = 0);
  // An allocation at a chosen address: an allocator handing back memory freed earlier.
  uint64_t alloc_at(uint64_t ptr, uint64_t bytes, const std::string& name = {}, AllocKind kind = AllocKind::Device,
                    StreamId stream = 0);
  uint64_t host_alloc(uint64_t bytes, bool pinned);  // host memory: pinned is recorded, pageable is not
  void free(uint64_t ptr, AllocKind kind = AllocKind::Device, StreamId stream = 0);
  void name_buffer(uint64_t ptr, uint64_t bytes, const std::string& name);

  // As the tracer writes them from version 5 on: a RangeEdge at each push and pop.
  void push_range(const std::string& name);
  void pop_range();
  // Without RangeEdge records, as tracers before version 5 wrote ranges.
  void set_range_edges(bool on) { range_edges_ = on; }
  void host_thread(uint64_t tid);
  void host_gap(double us);  // host time between API calls

  // Operations; each returns its seq. Durations in microseconds.
  uint64_t kernel(StreamId s, const std::string& name, const std::vector<KernelAccess>& accesses = {},
                  double us = 10, FootprintTier tier = FootprintTier::Annotation);
  // A launch as the static tier traces it: raw argument bytes, no Access records.
  uint64_t kernel_with_params(StreamId s, const std::string& name, const std::string& params, double us = 10);
  uint64_t memcpy(StreamId s, uint64_t dst, uint64_t src, uint64_t bytes,
                  MemcpyKind kind = MemcpyKind::DeviceToDevice, double us = 2);
  // cudaMemcpy (not Async): on the legacy stream; `pageable` for a pageable host side.
  uint64_t memcpy_sync(uint64_t dst, uint64_t src, uint64_t bytes, MemcpyKind kind, bool pageable = false,
                       double us = 2);
  uint64_t memset(StreamId s, uint64_t dst, uint64_t bytes, uint32_t value = 0, double us = 1);
  uint64_t memset_sync(uint64_t dst, uint64_t bytes, uint32_t value = 0, double us = 1);
  uint64_t host_func(StreamId s, double us = 1);
  uint64_t nccl(StreamId s, NcclKind kind, uint64_t sendbuf, uint64_t recvbuf, uint64_t count, uint64_t comm,
                double us = 20, int peer = -1, uint8_t elem_bytes = 4);
  // A call on a communicator of `comm_size` ranks in which this rank is `comm_rank` (a group of
  // the job's ranks: tensor- or pipeline-parallel groups); `peer` is the root's group rank.
  uint64_t nccl_in_group(StreamId s, NcclKind kind, uint64_t sendbuf, uint64_t recvbuf, uint64_t count, uint64_t comm,
                         uint32_t comm_rank, uint32_t comm_size, int peer = -1);
  uint64_t all_reduce(StreamId s, uint64_t sendbuf, uint64_t recvbuf, uint64_t count, uint64_t comm,
                      double us = 20) {
    return nccl(s, NcclKind::AllReduce, sendbuf, recvbuf, count, comm, us);
  }

  // Events and synchronisation.
  EventId event(uint32_t flags = 0);
  void record(EventId e, StreamId s);
  void wait(StreamId s, EventId e);
  void event_sync(EventId e);
  void event_query(EventId e, bool complete);
  void stream_sync(StreamId s);
  void stream_query(StreamId s, bool complete);
  void device_sync();

  // Call stacks. A stack is given innermost frame first and returns its innermost call site;
  // frames and call sites are interned, so a repeated call site costs one id. While a stack
  // is in use, every API record the builder writes is followed by a StackRef to it.
  ModuleId module(const std::string& path, uint64_t base, uint64_t size, const std::string& build_id = {});
  CallsiteId stack(const std::vector<BuilderFrame>& innermost_first);
  CallsiteId python_stack(const std::vector<BuilderFrame>& innermost_first) { return stack(innermost_first); }
  void use_stack(CallsiteId callsite) { stack_ = callsite; }  // 0: no stacks from here on
  void stack_for(uint64_t seq, CallsiteId callsite) { add(StackRef{seq, callsite}); }

  // Stream capture: operations issued between begin and end run at graph_launch.
  GraphId begin_capture(StreamId s);
  // cuStreamBeginCaptureToGraph: captures into graph g (made by an earlier capture or a new id).
  void begin_capture_into(StreamId s, GraphId g, bool named = true);
  void end_capture(StreamId s, GraphId g);
  uint64_t graph_launch(StreamId s, GraphId g);

  void add(const Record& r);  // any record, as is
  void write(const std::string& path) const;  // buffered records, header first, clean end
  void close();                               // ends a streamed file
  const std::vector<Record>& records() const { return records_; }
  uint64_t operations() const { return operations_; }
  nlohmann::json header() const;
  // A header field as a tracer would write it (e.g. "gpu_times"); before the first record.
  void set_header_field(const std::string& key, nlohmann::json value) { extra_header_[key] = std::move(value); }

 private:
  uint64_t next_seq() { return ++seq_; }
  // The StackRef of the API record just added, when a stack is in use.
  void attach_stack(uint64_t seq) {
    if (stack_) add(StackRef{seq, stack_});
  }
  StringId intern(const std::string& text);
  OpCommon op_on(StreamId s);
  // An NCCL call by group rank `comm_rank` of a `comm_size`-rank communicator.
  uint64_t nccl_call(StreamId s, NcclKind kind, uint64_t sendbuf, uint64_t recvbuf, uint64_t count, uint64_t comm,
                     uint32_t comm_rank, uint32_t comm_size, int peer, uint8_t elem_bytes, double us);
  void emit_timing(uint64_t seq, StreamId s, double us);
  // Adds an operation (its OpCommon filled in here), the records `attached` to it (Access
  // records get its seq) and its simulated interval; returns its seq.
  template <class Op> uint64_t issue(StreamId s, Op op, double us, const std::vector<Record>& attached = {});
  StreamId make_stream(uint32_t flags, const std::string& name);
  double& stream_free(StreamId s) { return stream_free_us_[s]; }

  int rank_;
  int world_size_;
  nlohmann::json extra_header_ = nlohmann::json::object();
  std::unique_ptr<TraceFileWriter> sink_;
  std::vector<Record> records_;
  uint64_t seq_ = 0;
  uint64_t operations_ = 0;
  uint64_t next_device_ptr_ = 0x7f0000000000;
  uint64_t next_host_ptr_ = 0x100000000;
  StreamId next_stream_ = 1;
  EventId next_event_ = 1;
  GraphId next_graph_ = 1;
  StreamId legacy_ = 0;
  std::map<uint64_t, StreamId> per_thread_streams_;
  uint64_t tid_ = 1;
  std::unordered_map<std::string, StringId> strings_;
  std::vector<std::string> nvtx_stack_;
  bool range_edges_ = true;
  StringId nvtx_ = 0;
  double host_us_ = 0;
  std::unordered_map<StreamId, double> stream_free_us_;
  std::unordered_map<EventId, double> event_time_us_;
  std::map<StreamId, GraphId> capturing_;
  std::map<GraphId, std::vector<std::pair<uint64_t, double>>> graph_ops_;  // captured ops: seq, us
  std::map<uint64_t, uint64_t> comm_seq_;  // per communicator: the next call's sequence number
  CallsiteId stack_ = 0;
  ModuleId next_module_ = 1;
  std::map<std::tuple<int, std::string, uint32_t, std::string, ModuleId, uint64_t>, FrameId> frames_;
  std::map<std::pair<CallsiteId, FrameId>, CallsiteId> callsites_;  // (parent, frame) -> id
};

// Several ranks with shared communicators.
class TraceBuilder {
 public:
  explicit TraceBuilder(int world_size);
  RankTraceBuilder& rank(int r) { return *ranks_.at(static_cast<size_t>(r)); }
  int world_size() const { return static_cast<int>(ranks_.size()); }
  // The hash of communicator number `n`, the same on every rank.
  static uint64_t comm(int n = 0) { return 0xc0ffee0000ull + static_cast<uint64_t>(n); }
  // Writes DIR/rank<N>.shz for every rank (creating DIR).
  void write_dir(const std::string& dir) const;

 private:
  std::vector<std::unique_ptr<RankTraceBuilder>> ranks_;
};

}  // namespace streamhaz::trace
