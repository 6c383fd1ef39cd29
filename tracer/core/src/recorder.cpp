#include "streamhaz/tracer/recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "streamhaz/trace/range_path.h"
#include "streamhaz/tracer/launch_memo.h"
#include "streamhaz/tracer/operand_roles.h"
#include "streamhaz/tracer/self_profile.h"

namespace streamhaz::tracer {

using namespace streamhaz::trace;

uint64_t current_thread_id() {
  // Constant-initialised (filled on first use) so that reads need no TLS init guard.
  thread_local uint64_t tid = 0;
  if (tid == 0) tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  return tid;
}

Recorder::Recorder(RecordSink& sink, StreamInfoQuery stream_query, CommInfoQuery comm_query)
    : sink_(sink), stream_query_(std::move(stream_query)), comm_query_(std::move(comm_query)) {}

void Recorder::set_stack_source(StackSource* source, PathPrefixMap paths) {
  TimedLock lock(mu_);
  stack_source_ = source;
  if (!source) {
    stacks_.reset();
    return;
  }
  stacks_ = std::make_unique<StackTable>([this](const Record& r) { sink_.add(r); },
                                         [this](std::string_view text) { return intern(text); },
                                         StackTable::kMaxCallsites, std::move(paths));
}

namespace {

// The seq of a record that gets a stack (every API call), and which frames it wants; 0 for
// the others.
uint64_t stacked_seq(const Record& r, StackNeed& need) {
  need = std::holds_alternative<Kernel>(r) ? StackNeed::KernelLaunch
         : std::holds_alternative<Alloc>(r) || std::holds_alternative<Free>(r) || std::holds_alternative<StreamCreate>(r)
             ? StackNeed::Origin
             : StackNeed::Operation;
  return api_seq(r);
}

}  // namespace

void Recorder::emit_with_stack(const Record& r) {
  StackNeed need;
  const uint64_t seq = stacked_seq(r, need);
  if (seq == 0) {
    sink_.add(r);
    return;
  }
  // Definitions first (they may come before the record), the reference after it.
  const size_t n = stack_source_->capture(need, stack_scratch_, kMaxStackFrames);
  CallsiteId site;
  {
    PhaseTimer timer(Phase::StackIntern);
    site = stacks_->intern(std::span<const RawFrame>(stack_scratch_, n), *stack_source_);
  }
  sink_.add(r);
  if (site == 0) return;
  if (need == StackNeed::KernelLaunch) kernel_stack_ = StackRef{seq, site};
  else sink_.add(StackRef{seq, site});
}

Recorder::ThreadState& Recorder::thread_state() {
  uint64_t tid = current_thread_id();
  if (tid != last_thread_) {
    last_thread_ = tid;
    last_state_ = &threads_[tid];
    emit(HostThread{tid});
  }
  return *last_state_;
}

Recorder::ThreadState& Recorder::quiet_thread_state() { return threads_[current_thread_id()]; }

StringId Recorder::intern(std::string_view text) {
  auto it = strings_.find(text);  // no std::string built for a hit
  if (it != strings_.end()) return it->second;
  StringId id = static_cast<StringId>(strings_.size() + 1);
  strings_.emplace(std::string(text), id);
  emit(StringDef{id, std::string(text)});
  return id;
}

StringId Recorder::function_name(const KernelLaunch& k) {
  if (k.function == 0) return intern(k.name.view());
  if (const StringId* id = function_names_.find(k.function)) return *id;
  const std::string_view name = k.name.view();
  StringId id = intern(name);
  function_names_.try_emplace(k.function, id);
  operand_arrays_.try_emplace(k.function, operand_array_param(name));
  return id;
}

// Looked up once per function, beside its name (function_name).
int Recorder::operand_array(const KernelLaunch& k) {
  if (const int* known = k.function ? operand_arrays_.find(k.function) : nullptr) return *known;
  return operand_array_param(k.name.view());
}

StreamId Recorder::new_stream(StreamKey key, uint32_t device, uint32_t flags, int32_t priority) {
  StreamId id = next_stream_++;
  streams_[key] = id;
  uint64_t handle = key.handle;
  emit(StreamCreate{next_seq(), id, device, flags, priority, handle});
  return id;
}

// Default streams are keyed by device (and thread); created streams by handle alone, because
// a handle names one stream whatever context is current.
StreamId Recorder::stream_id(StreamRef s) {
  const bool per_thread = s.handle == kHandlePerThreadStream || (s.handle == 0 && s.per_thread_api);
  const bool legacy = !per_thread && (s.handle == 0 || s.handle == kHandleLegacyStream);
  StreamKey key{s.handle, 0, 0};
  uint32_t flags = 0;
  if (per_thread) {
    key = {kHandlePerThreadStream, s.device, current_thread_id()};
    flags = kStreamPerThreadDefault;
  } else if (legacy) {
    key = {0, s.device, 0};
    flags = kStreamLegacyDefault;
  }
  auto it = streams_.find(key);
  if (it != streams_.end()) return it->second;
  if (per_thread || legacy) return new_stream(key, s.device, flags, 0);
  // A created stream we did not see created (made before the tracer, or by another path).
  StreamInfo info{s.device, 0, 0};
  if (stream_query_) {
    if (auto q = stream_query_(s.handle)) info = *q;
  }
  return new_stream(key, info.device, info.flags, info.priority);
}

StreamId Recorder::stream_id(ThreadState& t, StreamRef s) {
  StreamCache& c = t.last_stream;
  if (c.epoch == streams_epoch_ && c.handle == s.handle && c.device == s.device &&
      c.per_thread_api == s.per_thread_api)
    return c.id;
  StreamId id = stream_id(s);
  c = StreamCache{s.handle, s.device, s.per_thread_api, streams_epoch_, id};
  return id;
}

EventId Recorder::event_id(ThreadState& t, uint64_t event) {
  EventCache& c = t.last_event;
  if (c.epoch == events_epoch_ && c.handle == event) return c.id;
  EventId id = event_id(event);
  c = EventCache{event, events_epoch_, id};
  return id;
}

EventId Recorder::event_id(uint64_t event) {
  auto it = events_.find(event);
  if (it != events_.end()) return it->second;
  EventId id = next_event_++;
  events_[event] = id;
  emit(EventCreate{id, 0});  // flags unknown: created before we looked
  return id;
}

OpCommon Recorder::op_common(ThreadState& t, StreamRef s) {
  OpCommon op;
  op.stream = stream_id(t, s);
  op.seq = next_seq();
  op.nvtx = t.nvtx.empty() ? 0 : t.nvtx.back();
  return op;
}

bool Recorder::will_get_activity(uint64_t correlation) {
  if (correlation == 0 || !timings_expected_.load(std::memory_order_relaxed)) return false;
  // Captured operations never run, so never report activity: bound what waits for it.
  if (one_op_.size() > kMaxPendingCorrelations) one_op_.clear();
  if (many_ops_.size() > kMaxPendingCorrelations) many_ops_.clear();
  return true;
}

void Recorder::expect_activity(uint64_t correlation, uint64_t seq) {
  if (!will_get_activity(correlation)) return;
  auto [first, fresh] = one_op_.try_emplace(correlation, seq);
  if (fresh) return;
  // A second op for one correlation (grouped NCCL calls share their kernel).
  auto& many = many_ops_[correlation];
  if (many.seqs.empty()) many.seqs.push_back(*first);
  many.seqs.push_back(seq);
  one_op_.erase(correlation);
}

// --- streams and events ----------------------------------------------------------------

void Recorder::stream_created(uint64_t handle, uint32_t device, uint32_t flags, int32_t priority) {
  on_thread([&](ThreadState&) {
    streams_.erase(StreamKey{handle, 0, 0});  // a reused handle is a new stream
    ++streams_epoch_;
    new_stream(StreamKey{handle, 0, 0}, device, flags, priority);
  });
}

void Recorder::stream_destroyed(uint64_t handle) {
  TimedLock lock(mu_);
  if (handle > kHandlePerThreadStream && streams_.erase(StreamKey{handle, 0, 0})) ++streams_epoch_;
}

void Recorder::stream_named(StreamRef s, std::string_view name) {
  on_stream(s, [&](StreamId st) { return StreamName{st, intern(name)}; });
}

void Recorder::event_created(uint64_t event, uint32_t flags) {
  on_thread([&](ThreadState&) {
    EventId id = next_event_++;
    events_[event] = id;
    ++events_epoch_;  // a reused handle is a new event
    emit(EventCreate{id, flags});
  });
}

void Recorder::event_destroyed(uint64_t event) {
  TimedLock lock(mu_);
  if (events_.erase(event)) ++events_epoch_;
}

void Recorder::event_recorded(uint64_t event, StreamRef s) {
  on_event_and_stream(event, s, [&](EventId e, StreamId st) { return EventRecord{next_seq(), e, st}; });
}

void Recorder::event_waited(StreamRef s, uint64_t event) {
  on_event_and_stream(event, s, [&](EventId e, StreamId st) { return EventWait{next_seq(), st, e}; });
}

void Recorder::event_synchronized(uint64_t event) {
  on_event(event, [&](EventId e) { return EventSync{next_seq(), e}; });
}

void Recorder::event_queried(uint64_t event, bool complete) {
  on_event(event, [&](EventId e) { return EventQuery{next_seq(), e, complete}; });
}

void Recorder::stream_synchronized(StreamRef s) {
  on_stream(s, [&](StreamId st) { return StreamSync{next_seq(), st}; });
}

void Recorder::stream_queried(StreamRef s, bool complete) {
  on_stream(s, [&](StreamId st) { return StreamQuery{next_seq(), st, complete}; });
}

void Recorder::device_synchronized(uint32_t device) {
  on_thread([&](ThreadState&) { emit(DeviceSync{next_seq(), device}); });
}

// --- operations ------------------------------------------------------------------------

// NCCL's own kernel: the Nccl record(s) stand for it; it only lends them its timing.
void Recorder::lend_to_nccl(ThreadState& t, StreamRef s, uint64_t correlation) {
  StreamId st = stream_id(t, s);
  bool any_on_stream = false;
  for (const Nccl& n : t.claimants) any_on_stream |= n.op.stream == st;
  for (const Nccl& n : t.claimants) {
    if (!any_on_stream || n.op.stream == st) expect_activity(correlation, n.op.seq);
  }
}

void Recorder::kernel_launched(StreamRef s, uint64_t correlation, const KernelLaunch& k) {
  TimedLock lock(mu_);
  ThreadState& t = thread_state();
  if (t.nccl_depth > 0 && !t.claimants.empty()) return lend_to_nccl(t, s, correlation);
  if (!hold_kernels_) return emit_kernel(t, s, correlation, k, nullptr);
  ThreadState::HeldLaunch& h = t.held_launch;
  h.active = true;
  h.stream = s;
  h.correlation = correlation;
  h.function = k.function;
  h.name.assign(k.name.view());
  std::copy(k.grid, k.grid + 3, h.grid);
  std::copy(k.block, k.block + 3, h.block);
  h.shared_mem = k.shared_mem;
  h.params.assign(k.params.data(), k.params.size());
  h.layout = k.layout;
}

void Recorder::release_kernel(const std::vector<KernelRange>* ranges, trace::FootprintTier tier) {
  TimedLock lock(mu_);
  // Looked up without thread_state(): a thread with nothing held must not leave a HostThread.
  auto it = threads_.find(current_thread_id());
  if (it == threads_.end() || !it->second.held_launch.active) return;
  ThreadState& t = thread_state();
  ThreadState::HeldLaunch& h = t.held_launch;
  h.active = false;
  KernelLaunch k;
  k.function = h.function;
  k.name = std::string_view(h.name);
  std::copy(h.grid, h.grid + 3, k.grid);
  std::copy(h.block, h.block + 3, k.block);
  k.shared_mem = h.shared_mem;
  k.params = h.params;
  k.layout = h.layout;
  emit_kernel(t, h.stream, h.correlation, k, ranges, tier);
}

bool Recorder::held_launch_key(LaunchKey& key) {
  TimedLock lock(mu_);
  auto it = threads_.find(current_thread_id());
  if (it == threads_.end() || !it->second.held_launch.active) return false;
  const ThreadState::HeldLaunch& h = it->second.held_launch;
  key.function = h.function;
  std::copy(h.grid, h.grid + 3, key.grid);
  std::copy(h.block, h.block + 3, key.block);
  key.shared_mem = h.shared_mem;
  key.params.assign(h.params);
  return true;
}

bool Recorder::holds_kernel() {
  TimedLock lock(mu_);
  auto it = threads_.find(current_thread_id());  // no HostThread record for a question
  return it != threads_.end() && it->second.held_launch.active;
}

void Recorder::emit_kernel(ThreadState& t, StreamRef s, uint64_t correlation, const KernelLaunch& k,
                           const std::vector<KernelRange>* exact, trace::FootprintTier exact_tier) {
  Kernel& rec = std::get<Kernel>(kernel_record_);
  rec.name = function_name(k);  // before op_common: a StringDef precedes the stream's records
  rec.op = op_common(t, s);
  for (int i = 0; i < 3; ++i) {
    rec.grid[i] = k.grid[i];
    rec.block[i] = k.block[i];
  }
  rec.shared_mem = k.shared_mem;
  if (kernel_arguments_ == KernelArguments::PointersAndBytes) rec.params.assign(k.params.data(), k.params.size());
  else rec.params.clear();
  expect_activity(correlation, rec.op.seq);
  emit(kernel_record_);
  if (kernel_arguments_ != KernelArguments::Drop) {
    PhaseTimer timer(Phase::PointerScan);
    pointers_.clear();
    allocations_.pointers_in(k.params, pointers_);
    if (!pointers_.empty()) {
      operand_roles(k.params, k.layout, operand_array(k), pointers_, pointer_roles_);
      for (size_t i = 0; i < pointers_.size(); ++i)
        emit(Access{rec.op.seq, pointers_[i], 0, pointer_roles_[i], FootprintTier::Pointer});
    }
  }
  if (exact)
    for (const KernelRange& r : *exact) {
      if (r.hi <= r.lo) continue;
      if (!r.coarse) {
        emit(Access{rec.op.seq, r.lo, r.hi - r.lo, r.mode, exact_tier});
        continue;
      }
      cut_scratch_.clear();
      allocations_.cut(r.lo, r.hi, cut_scratch_);
      for (const auto& [lo, hi] : cut_scratch_) emit(Access{rec.op.seq, lo, hi - lo, r.mode, FootprintTier::Coarse});
    }
  if (kernel_stack_.seq == rec.op.seq && kernel_stack_.callsite != 0) {
    sink_.add(kernel_stack_);
    kernel_stack_ = StackRef{};
  }
}

void Recorder::memcpy_issued(StreamRef s, uint64_t correlation, Memcpy m) { issue(s, correlation, m); }

void Recorder::memset_issued(StreamRef s, uint64_t correlation, Memset m) { issue(s, correlation, m); }

void Recorder::host_func_launched(StreamRef s) {
  HostFunc h;
  issue(s, /*correlation=*/0, h);
}

void Recorder::graph_instantiated(uint64_t exec, uint64_t graph) {
  TimedLock lock(mu_);
  auto it = graph_of_handle_.find(graph);
  graph_of_exec_[exec] = it != graph_of_handle_.end() ? it->second : 0;  // 0: a graph not captured
}

void Recorder::graph_launched(StreamRef s, uint64_t correlation, uint64_t exec) {
  on_thread([&](ThreadState& t) {
    GraphLaunch g;
    g.op = op_common(t, s);
    auto it = graph_of_exec_.find(exec);
    g.graph = it != graph_of_exec_.end() ? it->second : 0;
    // Every node of the graph reports this correlation: keep the entry for all of them.
    if (will_get_activity(correlation)) many_ops_[correlation] = ManyOps{{g.op.seq}, true};
    emit(g);
  });
}

void Recorder::capture_began(StreamRef s, uint64_t into) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream_id(t, s);
    GraphId graph = 0;  // a plain capture: its graph is known only at the end
    if (into) {
      auto [it, fresh] = graph_of_handle_.try_emplace(into, next_graph_);
      if (fresh) ++next_graph_;
      graph = it->second;
      capturing_into_[st] = graph;
    }
    emit(CaptureBegin{next_seq(), st, graph});
  });
  open_captures_.fetch_add(1, std::memory_order_relaxed);
}

void Recorder::capture_ended(StreamRef s, uint64_t graph) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream_id(t, s);
    GraphId serial = 0;
    if (auto into = capturing_into_.find(st); into != capturing_into_.end()) {
      serial = graph ? into->second : 0;  // added to the graph it named
      capturing_into_.erase(into);
    } else if (graph) {
      serial = next_graph_++;
      graph_of_handle_[graph] = serial;
    }
    emit(CaptureEnd{next_seq(), st, serial});
  });
  if (open_captures_.load(std::memory_order_relaxed) > 0) open_captures_.fetch_sub(1, std::memory_order_relaxed);
}

// --- memory ----------------------------------------------------------------------------

void Recorder::allocated(AllocKind kind, uint64_t ptr, uint64_t bytes, uint32_t device,
                         std::optional<StreamRef> stream) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream ? stream_id(t, *stream) : 0;  // before the seq: it may create the stream
    emit(Alloc{next_seq(), ptr, bytes, device, kind, st});
    allocations_.add(ptr, bytes);
  });
}

void Recorder::freed(AllocKind kind, uint64_t ptr, std::optional<StreamRef> stream) {
  on_thread([&](ThreadState& t) {
    const StreamId st = stream ? stream_id(t, *stream) : 0;
    emit(Free{next_seq(), ptr, kind, st});
    allocations_.remove(ptr);
  });
}

void Recorder::buffer_named(uint64_t ptr, uint64_t bytes, std::string_view name) {
  on_thread([&](ThreadState&) { emit(BufferName{ptr, bytes, intern(name)}); });
}

// --- NCCL ------------------------------------------------------------------------------

void Recorder::nccl_comm_initialized(uint64_t comm, CommInfo info) {
  TimedLock lock(mu_);
  comms_[comm] = CommState{info, 0};
}

void Recorder::nccl_comm_destroyed(uint64_t comm) {
  TimedLock lock(mu_);
  comms_.erase(comm);
}

Recorder::CommState& Recorder::comm_state(uint64_t comm) {
  auto it = comms_.find(comm);
  if (it != comms_.end()) return it->second;
  CommInfo info;
  if (comm_query_) {
    if (auto q = comm_query_(comm)) info = *q;
  }
  // Init not seen: the n-th such communicator of every rank is presumed the same one.
  if (info.hash == 0) info.hash = 0x5eed000000000000ull + ++unknown_comms_;
  return comms_[comm] = CommState{info, 0};
}

void Recorder::record_nccl(ThreadState& t, Nccl& n) {
  n.op.seq = next_seq();
  n.op.nvtx = t.nvtx.empty() ? 0 : t.nvtx.back();
  emit(n);
  t.claimants.push_back(n);
}

void Recorder::nccl_call_begin(const NcclCall& call) {
  TimedLock lock(mu_);
  ThreadState& t = thread_state();
  ++t.nccl_depth;
  CommState& c = comm_state(call.comm);
  Nccl n;
  n.kind = call.kind;
  n.sendbuf = call.sendbuf;
  n.recvbuf = call.recvbuf;
  n.count = call.count;
  n.dtype = call.dtype;
  n.elem_bytes = call.elem_bytes;
  n.redop = call.redop;
  n.peer = call.peer;
  n.comm = c.info.hash;
  n.rank = c.info.rank;
  n.nranks = c.info.nranks;
  n.comm_seq = c.next_seq++;
  n.op.stream = stream_id(t, call.stream);
  if (t.group_depth > 0) {
    t.held.push_back(n);  // enqueued by NCCL only at the outermost ncclGroupEnd
    return;
  }
  t.claimants.clear();
  record_nccl(t, n);
}

void Recorder::nccl_call_end() {
  TimedLock lock(mu_);
  ThreadState& t = quiet_thread_state();
  if (t.nccl_depth > 0) --t.nccl_depth;
  if (t.nccl_depth == 0 && t.group_depth == 0) t.claimants.clear();
}

void Recorder::nccl_group_start() {
  TimedLock lock(mu_);
  ++quiet_thread_state().group_depth;
}

void Recorder::nccl_group_end_begin() {
  TimedLock lock(mu_);
  ThreadState& t = thread_state();
  ++t.nccl_depth;
  if (t.group_depth > 1) return;  // an inner group end launches nothing
  t.claimants.clear();
  std::vector<Nccl> held = std::move(t.held);
  t.held.clear();
  for (Nccl& n : held) record_nccl(t, n);
}

void Recorder::nccl_group_end_end() {
  TimedLock lock(mu_);
  ThreadState& t = quiet_thread_state();
  if (t.nccl_depth > 0) --t.nccl_depth;
  if (t.group_depth > 0) --t.group_depth;
  if (t.group_depth == 0 && t.nccl_depth == 0) t.claimants.clear();
}

// --- NVTX, timing, meta ----------------------------------------------------------------

void Recorder::set_step_range(std::string name) {
  TimedLock lock(mu_);
  step_range_ = std::move(name);
}

int Recorder::nvtx_push(std::string_view message) {
  TimedLock lock(mu_);
  // A range without readable text (a library's registered string) keeps push/pop balanced
  // but adds no segment: operations inside it show their program's path, and no edge is written.
  if (message.empty()) {
    ThreadState& t = quiet_thread_state();
    t.nvtx.push_back(t.nvtx.empty() ? 0 : t.nvtx.back());
    t.nvtx_paths.push_back(t.nvtx_paths.empty() ? std::string() : t.nvtx_paths.back());
    return -1;
  }
  ThreadState& t = thread_state();
  std::string path;
  if (!t.nvtx_paths.empty() && !t.nvtx_paths.back().empty()) path = t.nvtx_paths.back() + '/';
  path += message;
  const StringId id = intern(path);
  const bool opens_step = !open_step_ && trace::opens_outermost_range(path, step_range_);
  t.nvtx.push_back(id);
  t.nvtx_paths.push_back(std::move(path));
  emit(RangeEdge{next_seq(), id, true});
  if (!opens_step) return -1;
  open_step_ = id;
  return steps_++;
}

bool Recorder::nvtx_pop() {
  TimedLock lock(mu_);
  ThreadState& q = quiet_thread_state();
  if (q.nvtx.empty()) return false;  // a pop without push: ignore, as NVTX does
  const StringId id = q.nvtx.back();
  const bool segment = q.nvtx.size() < 2 ? id != 0 : id != q.nvtx[q.nvtx.size() - 2];
  ThreadState& t = segment ? thread_state() : q;
  t.nvtx.pop_back();
  t.nvtx_paths.pop_back();
  if (!segment) return false;
  emit(RangeEdge{next_seq(), id, false});
  if (id != open_step_) return false;
  open_step_ = 0;
  return true;
}

void Recorder::activity(uint64_t correlation, uint64_t start_ns, uint64_t end_ns) {
  TimedLock lock(mu_);
  if (!many_ops_.empty()) {
    if (auto many = many_ops_.find(correlation); many != many_ops_.end()) {
      for (uint64_t seq : many->second.seqs) emit(Timing{seq, start_ns, end_ns});
      if (!many->second.keep) many_ops_.erase(many);
      return;
    }
  }
  const uint64_t* seq = one_op_.find(correlation);
  if (!seq) return;  // not an operation we recorded
  emit(Timing{*seq, start_ns, end_ns});
  one_op_.erase(correlation);
}

void Recorder::forget_timings_through(uint64_t seq) {
  TimedLock lock(mu_);
  one_op_.erase_if([seq](uint64_t, uint64_t op) { return op <= seq; });
  for (auto it = many_ops_.begin(); it != many_ops_.end();) {
    const auto& seqs = it->second.seqs;
    const bool old = std::all_of(seqs.begin(), seqs.end(), [seq](uint64_t op) { return op <= seq; });
    it = old ? many_ops_.erase(it) : std::next(it);
  }
}

void Recorder::meta(std::string json) {
  TimedLock lock(mu_);
  emit(Meta{std::move(json)});
}

uint64_t Recorder::last_seq() const {
  TimedLock lock(mu_);
  return seq_;
}

size_t Recorder::pending_correlations() const {
  TimedLock lock(mu_);
  return one_op_.size() + many_ops_.size();
}

}  // namespace streamhaz::tracer
