// The Recorder turns API events into trace records. It knows nothing of CUDA, CUPTI or NCCL:
// the glue in tracer/glue decodes callbacks into the calls below (plain integers for handles),
// and unit tests feed it synthetic events. Everything here is thread-safe: one mutex covers
// the sequence number and the hand-off to the sink, so records leave in `seq` order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "streamhaz/trace/records.h"
#include "streamhaz/tracer/allocation_index.h"
#include "streamhaz/tracer/flat_map.h"
#include "streamhaz/tracer/hot_path.h"
#include "streamhaz/tracer/self_profile.h"
#include "streamhaz/tracer/allocator_history.h"
#include "streamhaz/tracer/call_clock.h"
#include "streamhaz/tracer/pattern_clock.h"
#include "streamhaz/tracer/stack_table.h"

namespace streamhaz::tracer {

// Where records go (a chunk encoder in production, a vector in tests). Called under the
// recorder's mutex, so implementations need no locking of their own for add().
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void add(const trace::Record& r) = 0;
  // One Access{op_seq, ptrs[i], 0, modes[i], tier} per pointer; a sink may write them faster.
  virtual void add_pointer_accesses(uint64_t op_seq, std::span<const uint64_t> ptrs,
                                    std::span<const trace::AccessMode> modes, trace::FootprintTier tier) {
    for (size_t i = 0; i < ptrs.size(); ++i) add(trace::Access{op_seq, ptrs[i], 0, modes[i], tier});
  }
};

// The driver's special stream handles.
inline constexpr uint64_t kHandleLegacyStream = 0x1;     // CU_STREAM_LEGACY
inline constexpr uint64_t kHandlePerThreadStream = 0x2;  // CU_STREAM_PER_THREAD

// A stream as an API call named it: handle 0 means the legacy default stream, unless the call
// was a per-thread-default variant (_ptsz/_ptds), where it means the thread's own stream.
struct StreamRef {
  uint64_t handle = 0;
  uint32_t device = 0;
  bool per_thread_api = false;
};

// What the glue can find out about a stream the recorder has not seen created.
struct StreamInfo {
  uint32_t device = 0;
  uint32_t flags = 0;  // trace::StreamFlags (kStreamNonBlocking)
  int32_t priority = 0;
};
using StreamInfoQuery = std::function<std::optional<StreamInfo>(uint64_t handle)>;

// What the glue knows about an NCCL communicator.
struct CommInfo {
  uint64_t hash = 0;  // equal on every rank
  uint32_t rank = 0;
  uint32_t nranks = 1;
};
using CommInfoQuery = std::function<std::optional<CommInfo>(uint64_t comm)>;

// A name that is measured only when read: the glue passes CUPTI's C string without a
// strlen on every launch, since the recorder reads it only for a function it has not seen.
// Where no string comes with the call, `lookup(context, key)` finds it, again only when read.
class LazyName {
 public:
  using Lookup = const char* (*)(const void* context, uint64_t key);
  LazyName() = default;
  LazyName(const char* text) : text_(text) {}
  LazyName(std::string_view view) : view_(view), measured_(true) {}
  LazyName(Lookup lookup, const void* context, uint64_t key) : lookup_(lookup), context_(context), key_(key) {}
  std::string_view view() const {
    if (measured_) return view_;
    const char* text = lookup_ ? lookup_(context_, key_) : text_;
    return std::string_view(text ? text : "");
  }

 private:
  const char* text_ = nullptr;
  std::string_view view_;
  bool measured_ = false;
  Lookup lookup_ = nullptr;
  const void* context_ = nullptr;
  uint64_t key_ = 0;
};

struct KernelLaunch {
  uint64_t function = 0;      // CUfunction/CUkernel handle: caches the interned name
  LazyName name;              // mangled; read only the first time `function` is seen
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_mem = 0;
  std::string_view params;    // raw bytes when footprints need them, else empty; copied
  // (offset, size) of each parameter in `params`, where the driver told them; else null.
  const std::vector<std::pair<size_t, size_t>>* layout = nullptr;
};

// Bytes a launch touched, as the exact tier's instrumentation reported them.
struct KernelRange {
  uint64_t lo = 0, hi = 0;
  trace::AccessMode mode = trace::AccessMode::Read;
  bool coarse = false;  // recorded at 32 KiB granules (footprint_table.h): tier coarse, cut at allocations
};

struct LaunchKey;  // launch_memo.h

// One NCCL call as issued (before the recorder adds seq, stream id and comm facts).
struct NcclCall {
  trace::NcclKind kind = trace::NcclKind::AllReduce;
  uint64_t sendbuf = 0;
  uint64_t recvbuf = 0;
  uint64_t count = 0;
  uint8_t dtype = 0;
  uint8_t elem_bytes = 4;
  uint8_t redop = 0;
  int32_t peer = -1;
  uint64_t comm = 0;  // the ncclComm_t value
  StreamRef stream;
};

// What a kernel's launch arguments become in the trace.
enum class KernelArguments {
  Drop,              // api tier: nothing
  Pointers,          // pointer tier: an Access of tier pointer per argument word that points
                     // into a traced allocation; the bytes themselves are not kept
  PointersAndBytes,  // static/exact tiers: the raw bytes too, for kernel summaries
};

class Recorder {
 public:
  explicit Recorder(RecordSink& sink, StreamInfoQuery stream_query = {}, CommInfoQuery comm_query = {});
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Streams and events.
  void stream_created(uint64_t handle, uint32_t device, uint32_t flags, int32_t priority);
  void stream_destroyed(uint64_t handle);
  void stream_named(StreamRef s, std::string_view name);
  void event_created(uint64_t event, uint32_t flags);
  void event_destroyed(uint64_t event);
  STREAMHAZ_HOT void event_recorded(uint64_t event, StreamRef s);
  STREAMHAZ_HOT void event_waited(StreamRef s, uint64_t event);
  STREAMHAZ_HOT void event_synchronized(uint64_t event);
  STREAMHAZ_HOT void event_queried(uint64_t event, bool complete);
  STREAMHAZ_HOT void stream_synchronized(StreamRef s);
  STREAMHAZ_HOT void stream_queried(StreamRef s, bool complete);
  void device_synchronized(uint32_t device);

  // Set once, before recording starts.
  // Call stacks: every record with a seq (operations, allocations, stream creation, events,
  // synchronizations) gets the calling thread's stack from `source` as a StackRef record
  // (after a kernel's Access records), file and module paths rewritten by `paths`; null: none.
  void set_stack_source(StackSource* source, PathPrefixMap paths = {});
  void set_kernel_arguments(KernelArguments a) { kernel_arguments_ = a; }
  KernelArguments kernel_arguments() const { return kernel_arguments_; }
  // Exact tier: a launch's Kernel record waits, per thread, until its instrumentation reports
  // the bytes it touched (release_kernel, still inside the launch call), so that the record and
  // its Access records leave together; it takes its seq then.
  void set_hold_kernels(bool hold) { hold_kernels_ = hold; }
  // The calling thread's held launch leaves now, with these ranges (null: none were reported),
  // as Access records of `tier` (Exact, or Memo for a footprint reused from identical launches).
  void release_kernel(const std::vector<KernelRange>* ranges, trace::FootprintTier tier = trace::FootprintTier::Exact);
  bool holds_kernel();
  // The calling thread's held launch as a memo key (all but its context); false when it holds none.
  bool held_launch_key(LaunchKey& key);
  // Stream captures begun and not yet ended, in every thread.
  int open_captures() const { return open_captures_.load(std::memory_order_relaxed); }

  // Operations on streams. `correlation` joins the later activity timestamps (0: none).
  STREAMHAZ_HOT void kernel_launched(StreamRef s, uint64_t correlation, const KernelLaunch& k);
  STREAMHAZ_HOT void memcpy_issued(StreamRef s, uint64_t correlation, trace::Memcpy m);
  STREAMHAZ_HOT void memset_issued(StreamRef s, uint64_t correlation, trace::Memset m);
  void host_func_launched(StreamRef s);
  // Graphs are named in the trace by a serial per captured graph, not by their CUgraph handle:
  // PyTorch destroys a graph once it is instantiated, and a later capture may get its handle.
  void graph_instantiated(uint64_t exec, uint64_t graph);
  void graph_launched(StreamRef s, uint64_t correlation, uint64_t exec);
  // `into`: cuStreamBeginCaptureToGraph's graph handle (0: a plain capture, whose graph exists
  // only at its end).
  void capture_began(StreamRef s, uint64_t into = 0);
  // `graph`: the handle cuStreamEndCapture returned, 0 when the capture was invalidated.
  void capture_ended(StreamRef s, uint64_t graph);

  // Memory.
  void allocated(trace::AllocKind kind, uint64_t ptr, uint64_t bytes, uint32_t device,
                 std::optional<StreamRef> stream = std::nullopt);
  void freed(trace::AllocKind kind, uint64_t ptr, std::optional<StreamRef> stream = std::nullopt);
  void buffer_named(uint64_t ptr, uint64_t bytes, std::string_view name);

  // NCCL. A call outside a group is recorded at once and claims the kernels launched before
  // nccl_call_end(); inside ncclGroupStart/End calls are held and recorded when the outermost
  // ncclGroupEnd begins, and claim the kernels launched inside it.
  void nccl_comm_initialized(uint64_t comm, CommInfo info);
  void nccl_comm_destroyed(uint64_t comm);
  void nccl_call_begin(const NcclCall& call);
  void nccl_call_end();
  void nccl_group_start();
  void nccl_group_end_begin();
  void nccl_group_end_end();

  // NVTX ranges of the calling thread; operations carry the innermost range path. A push that
  // opens an instance of the outermost step range (set_step_range) returns its number (0 for
  // the first), else -1; the pop that closes it returns true.
  int nvtx_push(std::string_view message);
  bool nvtx_pop();
  void set_step_range(std::string name);
  // Steps where the program opens no step range (pattern_clock.h): from now on its collectives
  // and host synchronisations are counted, and once call `seq` completes `periods` repeats of a
  // pattern of `period` calls, `found(period, seq)` is called once, outside the lock, by the first
  // thread to leave a call after it (most often the one that made it). A step range's first step
  // ends the counting: the range's steps are the steps then.
  using PatternFound = std::function<void(size_t period, uint64_t seq)>;
  void count_pattern_steps(int periods, PatternFound found);
  // Counting ends unfound (GPU times closed without steps: nothing left to close).
  void stop_counting_pattern_steps();

  // GPU interval of the operation(s) an API call with this correlation id issued.
  STREAMHAZ_HOT void activity(uint64_t correlation, uint64_t start_ns, uint64_t end_ns);
  // Whether operations issued from now on will get activity (GPU times sampled or off): those
  // that will not are not kept waiting for it.
  void set_timings_expected(bool expected) { timings_expected_.store(expected, std::memory_order_relaxed); }
  // Stops waiting for activity of operations with sequence numbers up to `seq`: those whose
  // activity never comes (issued as a window switched). The caller picks `seq` old enough that
  // CUPTI has delivered every activity it will give (tracer/glue/activity.cpp).
  void forget_timings_through(uint64_t seq);

  void meta(std::string json);

  // PyTorch's allocator history (allocator_history.h). The call clock samples the wall-clock
  // time of every call from now on, so that allocations stamped with Unix time can be placed
  // among the calls when the history arrives at exit; each becomes a TensorAlloc with its
  // Python stack, then a Meta says what was recorded. Returns the allocations written.
  void enable_call_clock();
  size_t allocator_history(const std::vector<HistoryAllocation>& allocations);
  // Records nothing from now on, after a Meta saying why and from which seq ("unobserved": the
  // reader marks such a trace truncated there). Returns that seq.
  uint64_t stop_observing(std::string_view why);

  // The history could not be had (not a PyTorch process, another allocator...): the Meta says why.
  void allocator_history_unavailable(std::string_view why);

  // A record the glue could not make (it caught an exception, such as out of memory in a
  // callback): counted without the lock, and the count reaches the trace (Session writes it
  // as "dropped_records"), so that check can say the trace is incomplete.
  void note_dropped() noexcept { dropped_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  // The sequence number of the last record handed out (0: none yet).
  uint64_t last_seq() const;
  // Runs `fn` under the recorder's mutex (the session flushes the sink this way).
  template <class Fn> auto with_lock(Fn&& fn) {
    std::lock_guard lock(mu_);
    return fn();
  }
  std::unique_lock<std::mutex> try_lock() { return std::unique_lock(mu_, std::try_to_lock); }

  // Correlations still waiting for activity (tests, and the session's drop of stale ones).
  size_t pending_correlations() const;

 private:
  // The thread's last stream and event lookups: launch loops name the same stream (and
  // record the same event) call after call. Valid while the epoch matches, which every
  // erase from streams_ / events_ bumps (a destroyed handle may come back as a new one).
  struct StreamCache {
    uint64_t handle = 0;
    uint32_t device = 0;
    bool per_thread_api = false;
    uint64_t epoch = 0;  // 0: empty
    trace::StreamId id = 0;
  };
  struct EventCache {
    uint64_t handle = 0;
    uint64_t epoch = 0;  // 0: empty
    trace::EventId id = 0;
  };
  struct ThreadState {
    std::vector<trace::StringId> nvtx;  // path ids, innermost last
    std::vector<std::string> nvtx_paths; // their texts ("outer/inner")
    int nccl_depth = 0;                 // inside an NCCL call or group end
    int group_depth = 0;
    std::vector<trace::Nccl> held;      // grouped calls not yet recorded
    std::vector<trace::Nccl> claimants; // recorded calls that claim kernels launched now
    StreamCache last_stream;
    EventCache last_event;
    struct HeldLaunch {
      bool active = false;
      StreamRef stream;
      uint64_t correlation = 0;
      uint64_t function = 0;
      std::string name;
      uint32_t grid[3], block[3], shared_mem = 0;
      std::string params;
      const std::vector<std::pair<size_t, size_t>>* layout = nullptr;  // outlives the launch (the driver facts' cache)
    } held_launch;  // exact tier: the launch waiting for its footprint
  };
  struct StreamKey {
    uint64_t handle;
    uint32_t device;
    uint64_t thread;  // per-thread default streams only
    bool operator==(const StreamKey&) const = default;
  };
  struct StreamKeyHash {
    size_t operator()(const StreamKey& k) const {
      return std::hash<uint64_t>()(k.handle * 0x9e3779b97f4a7c15ull ^ (uint64_t(k.device) << 48) ^ k.thread);
    }
  };
  struct CommState {
    CommInfo info;
    uint64_t next_seq = 0;
  };

  // The shape of most calls: under the lock, with the calling thread's state (thread_state()
  // writes a HostThread record first when the issuing thread changed).
  template <class Fn> void on_thread(Fn&& fn) {
    {
      TimedLock lock(mu_);
      fn(thread_state());
    }
    announce_pattern_steps();
  }
  // One record about a stream, or an event, or both: they are looked up (and created, with
  // their own seq, when new) before `make` gives the record its seq.
  template <class Make> void on_stream(StreamRef s, Make&& make) {
    on_thread([&](ThreadState& t) {
      const trace::StreamId st = stream_id(t, s);
      emit(make(st));
    });
  }
  template <class Make> void on_event(uint64_t event, Make&& make) {
    on_thread([&](ThreadState& t) {
      const trace::EventId e = event_id(t, event);
      emit(make(e));
    });
  }
  template <class Make> void on_event_and_stream(uint64_t event, StreamRef s, Make&& make) {
    on_thread([&](ThreadState& t) {
      const trace::EventId e = event_id(t, event);
      const trace::StreamId st = stream_id(t, s);
      emit(make(e, st));
    });
  }
  // An operation on a stream (op.op filled in here) that waits for its GPU times.
  template <class Op> void issue(StreamRef s, uint64_t correlation, Op& op) {
    on_thread([&](ThreadState& t) {
      op.op = op_common(t, s);
      expect_activity(correlation, op.op.seq);
      emit(op);
    });
  }

  // All below require mu_.
  uint64_t next_seq() {
    ++seq_;
    if (call_clock_) call_clock_->on_call(seq_, unix_time_us());
    return seq_;
  }
  void emit(const trace::Record& r) {
    if (stopped_) return;
    trace::CallsiteId site = 0;
    if (stacks_) site = emit_with_stack(r);
    else sink_.add(r);
    if (pattern_) [[unlikely]] count_pattern(r, site);
  }
  STREAMHAZ_HOT trace::CallsiteId emit_with_stack(const trace::Record& r);  // the record's call site, 0: none
  STREAMHAZ_HOT void count_pattern(const trace::Record& r, trace::CallsiteId site);
  // Without the lock, after a call that may have completed the pattern: calls its `found`.
  void announce_pattern_steps() {
    if (pattern_found_.load(std::memory_order_relaxed)) [[unlikely]] hand_pattern_steps_over();
  }
  void hand_pattern_steps_over();
  STREAMHAZ_HOT ThreadState& thread_state();  // also writes HostThread when the issuing thread changes
  // The calling thread's state without a HostThread record, for calls that record no
  // operation (NCCL nesting, NVTX ranges: at most a StringDef): the thread's next operation
  // writes the HostThread record where it matters.
  ThreadState& quiet_thread_state();
  STREAMHAZ_HOT trace::StreamId stream_id(ThreadState& t, StreamRef s);  // through the thread's cache
  trace::StreamId stream_id(StreamRef s);
  trace::StreamId new_stream(StreamKey key, uint32_t device, uint32_t flags, int32_t priority);
  STREAMHAZ_HOT trace::EventId event_id(ThreadState& t, uint64_t event);  // through the thread's cache
  trace::EventId event_id(uint64_t event);
  trace::StringId intern(std::string_view text);
  // A kernel function's name and operand array (operand_roles.h), looked up once per function.
  struct KernelFunction {
    trace::StringId name = 0;
    int operand_array = -1;
    int unfilled_slots = -1;  // operand_roles.h
  };
  STREAMHAZ_HOT KernelFunction kernel_function(const KernelLaunch& k);
  STREAMHAZ_HOT void emit_kernel(ThreadState& t, StreamRef s, uint64_t correlation, const KernelLaunch& k,
                   const std::vector<KernelRange>* exact, trace::FootprintTier exact_tier = trace::FootprintTier::Exact);
  STREAMHAZ_HOT trace::OpCommon op_common(ThreadState& t, StreamRef s);
  void lend_to_nccl(ThreadState& t, StreamRef s, uint64_t correlation);
  CommState& comm_state(uint64_t comm);
  void record_nccl(ThreadState& t, trace::Nccl& n);
  // Whether activity will come for this correlation (GPU times on); bounds the pending tables.
  STREAMHAZ_HOT bool will_get_activity(uint64_t correlation);
  STREAMHAZ_HOT void expect_activity(uint64_t correlation, uint64_t seq);

  // Read or written by every call, and together so that a call made after the program's own work
  // has evicted the tracer's data costs few cache misses.
  RecordSink& sink_;
  mutable std::mutex mu_;
  uint64_t seq_ = 0;
  uint64_t last_thread_ = 0;
  ThreadState* last_state_ = nullptr;  // threads_[last_thread_]; nodes never move
  uint64_t streams_epoch_ = 1;
  uint64_t events_epoch_ = 1;
  bool stopped_ = false;  // stop_observing(): nothing more is emitted
  KernelArguments kernel_arguments_ = KernelArguments::Drop;
  bool hold_kernels_ = false;
  std::atomic<bool> timings_expected_{true};
  StackSource* stack_source_ = nullptr;
  std::unique_ptr<StackTable> stacks_;
  std::unique_ptr<CallClock> call_clock_;  // only with --allocator-history
  trace::StackRef kernel_stack_;           // a launch's StackRef, written after its Access records
  FlatMap64<KernelFunction> functions_;    // function handle (non-zero) -> name, operand array
  // correlation id -> op seqs; one seq for most, several for grouped NCCL and graphs.
  FlatMap64<uint64_t> one_op_;
  struct ManyOps {
    std::vector<uint64_t> seqs;
    bool keep = false;  // graph launches: every node reports the launch's correlation
  };
  std::unordered_map<uint64_t, ManyOps> many_ops_;
  std::vector<uint64_t> pointers_;                // scratch: room for the launch's pointer arguments
  std::vector<trace::AccessMode> pointer_roles_;  // scratch: their roles (operand_roles.h)
  std::string filled_params_;  // scratch: arguments with the slots the launch did not fill zeroed (operand_roles.h)
  // The Kernel record is built in place and reused: its params keep their capacity, so a
  // launch allocates nothing (sinks copy what they keep).
  trace::Record kernel_record_{std::in_place_type<trace::Kernel>};
  AllocationIndex allocations_;  // device, managed, pinned and mapped memory seen so far

  StreamInfoQuery stream_query_;
  CommInfoQuery comm_query_;
  std::unordered_map<uint64_t, ThreadState> threads_;
  std::unordered_map<StreamKey, trace::StreamId, StreamKeyHash> streams_;
  trace::StreamId next_stream_ = 1;
  std::unordered_map<uint64_t, trace::EventId> events_;
  trace::EventId next_event_ = 1;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, trace::StringId, StringHash, std::equal_to<>> strings_;
  std::unordered_map<uint64_t, trace::GraphId> graph_of_exec_;    // CUgraphExec -> graph serial
  std::unordered_map<uint64_t, trace::GraphId> graph_of_handle_;  // CUgraph -> serial of its last capture
  std::unordered_map<trace::StreamId, trace::GraphId> capturing_into_;  // open to-graph captures
  trace::GraphId next_graph_ = 1;
  std::unordered_map<uint64_t, CommState> comms_;
  uint64_t unknown_comms_ = 0;
  static constexpr size_t kMaxPendingCorrelations = 1 << 20;
  // Training steps, as the analyzer's StepFinder finds them from the RangeEdge records.
  std::string step_range_;
  int steps_ = 0;
  trace::StringId open_step_ = 0;  // the path of the open step instance, 0: none open
  std::unique_ptr<PatternClock> pattern_;  // counting steps from the pattern (count_pattern_steps)
  PatternFound pattern_found_call_;
  std::atomic<bool> pattern_found_{false};  // found, not yet announced
  size_t found_period_ = 0;
  uint64_t found_seq_ = 0;
  std::atomic<int> open_captures_{0};
  RawFrame stack_scratch_[kMaxStackFrames];
  std::vector<std::pair<uint64_t, uint64_t>> cut_scratch_;  // scratch: a coarse range cut at allocations
  std::atomic<uint64_t> dropped_{0};
};

// The calling thread's kernel id (gettid), cached per thread.
STREAMHAZ_HOT uint64_t current_thread_id();

}  // namespace streamhaz::tracer
