// TraceBuilder implementation: keeps the simulated clocks and emits records in API order.
#include "streamhaz/testing/trace_builder.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace streamhaz::trace {
namespace {
constexpr double kApiCallUs = 1.0;
constexpr uint64_t kAlignment = 256;
}  // namespace

RankTraceBuilder::RankTraceBuilder(int rank, int world_size, std::string stream_to_path)
    : rank_(rank), world_size_(world_size) {
  if (!stream_to_path.empty()) {
    TraceFileWriter::Options o;
    o.overwrite = true;  // the builder's callers own their output paths
    sink_ = std::make_unique<TraceFileWriter>(stream_to_path, header(), o);
  }
}

nlohmann::json RankTraceBuilder::header() const {
  nlohmann::json h = {{"format", "streamhaz-trace"},
                      {"version", kFormatVersion},
                      {"host", "synthetic"},
                      {"pid", 1000 + rank_},
                      {"rank", rank_},
                      {"world_size", world_size_},
                      {"clock", "simulated"},
                      {"footprints", "annotation"},
                      {"gpu_times", "all"},  // every operation gets a simulated interval
                      {"devices", nlohmann::json::array({{{"index", 0}, {"name", "synthetic GPU"}}})},
                      {"command", nlohmann::json::array({"streamhaz-trace-builder"})}};
  h.update(extra_header_);
  return h;
}

void RankTraceBuilder::add(const Record& r) {
  if (sink_) sink_->add(r);
  else records_.push_back(r);
}

void RankTraceBuilder::write(const std::string& path) const {
  TraceFileWriter::Options o;
  o.overwrite = true;
  TraceFileWriter w(path, header(), o);
  for (const Record& r : records_) w.add(r);
  w.close();
}

void RankTraceBuilder::close() {
  if (sink_) sink_->close();
}

StringId RankTraceBuilder::intern(const std::string& text) {
  if (text.empty()) return 0;
  auto [it, inserted] = strings_.try_emplace(text, static_cast<StringId>(strings_.size() + 1));
  if (inserted) add(StringDef{it->second, text});
  return it->second;
}

StreamId RankTraceBuilder::make_stream(uint32_t flags, const std::string& name) {
  StreamId id = next_stream_++;
  const uint64_t seq = next_seq();
  add(StreamCreate{seq, id, 0, flags, 0, 0x1000 + id});
  attach_stack(seq);
  if (!name.empty()) add(StreamName{id, intern(name)});
  stream_free(id) = host_us_;
  return id;
}

StreamId RankTraceBuilder::stream(const std::string& name, bool non_blocking, int priority) {
  StreamId id = next_stream_++;
  const uint64_t seq = next_seq();
  add(StreamCreate{seq, id, 0, non_blocking ? uint32_t(kStreamNonBlocking) : 0u, priority, 0x1000 + id});
  attach_stack(seq);
  if (!name.empty()) add(StreamName{id, intern(name)});
  host_us_ += kApiCallUs;
  return id;
}

StreamId RankTraceBuilder::legacy_stream() {
  if (!legacy_) legacy_ = make_stream(kStreamLegacyDefault, "default stream");
  return legacy_;
}

StreamId RankTraceBuilder::per_thread_stream() {
  auto it = per_thread_streams_.find(tid_);
  if (it != per_thread_streams_.end()) return it->second;
  StreamId id = make_stream(kStreamPerThreadDefault, "per-thread default stream");
  per_thread_streams_[tid_] = id;
  return id;
}

uint64_t RankTraceBuilder::alloc(uint64_t bytes, const std::string& name, AllocKind kind, StreamId stream) {
  uint64_t ptr = next_device_ptr_;
  next_device_ptr_ += (bytes + kAlignment - 1) / kAlignment * kAlignment + kAlignment;
  const uint64_t seq = next_seq();
  add(Alloc{seq, ptr, bytes, 0, kind, stream});
  attach_stack(seq);
  if (!name.empty()) name_buffer(ptr, bytes, name);
  host_us_ += kApiCallUs;
  return ptr;
}

uint64_t RankTraceBuilder::alloc_at(uint64_t ptr, uint64_t bytes, const std::string& name, AllocKind kind,
                                    StreamId stream) {
  const uint64_t seq = next_seq();
  add(Alloc{seq, ptr, bytes, 0, kind, stream});
  attach_stack(seq);
  if (!name.empty()) name_buffer(ptr, bytes, name);
  host_us_ += kApiCallUs;
  return ptr;
}

uint64_t RankTraceBuilder::host_alloc(uint64_t bytes, bool pinned) {
  uint64_t ptr = next_host_ptr_;
  next_host_ptr_ += (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (pinned) {
    const uint64_t seq = next_seq();
    add(Alloc{seq, ptr, bytes, 0, AllocKind::HostPinned, 0});
    attach_stack(seq);
  }
  return ptr;
}

void RankTraceBuilder::free(uint64_t ptr, AllocKind kind, StreamId stream) {
  const uint64_t seq = next_seq();
  add(Free{seq, ptr, kind, stream});
  attach_stack(seq);
  if (kind == AllocKind::Device) {  // cudaFree waits for the device
    for (auto& [s, t] : stream_free_us_) host_us_ = std::max(host_us_, t);
  }
  host_us_ += kApiCallUs;
}

void RankTraceBuilder::name_buffer(uint64_t ptr, uint64_t bytes, const std::string& name) {
  add(BufferName{ptr, bytes, intern(name)});
}

void RankTraceBuilder::push_range(const std::string& name) {
  nvtx_stack_.push_back(nvtx_stack_.empty() ? name : nvtx_stack_.back() + "/" + name);
  nvtx_ = intern(nvtx_stack_.back());
  if (range_edges_) add(RangeEdge{next_seq(), nvtx_, true});
}

void RankTraceBuilder::pop_range() {
  if (nvtx_stack_.empty()) throw std::logic_error("pop_range without push_range");
  if (range_edges_) add(RangeEdge{next_seq(), nvtx_, false});
  nvtx_stack_.pop_back();
  nvtx_ = nvtx_stack_.empty() ? 0 : intern(nvtx_stack_.back());
}

void RankTraceBuilder::host_thread(uint64_t tid) {
  if (tid == tid_) return;
  tid_ = tid;
  add(HostThread{tid});
}

void RankTraceBuilder::host_gap(double us) { host_us_ += us; }

OpCommon RankTraceBuilder::op_on(StreamId s) {
  ++operations_;
  return OpCommon{next_seq(), s, nvtx_};
}

// Simulates when an operation runs; captured operations only run when their graph launches.
void RankTraceBuilder::emit_timing(uint64_t seq, StreamId s, double us) {
  host_us_ += kApiCallUs;
  if (auto cap = capturing_.find(s); cap != capturing_.end()) {
    graph_ops_[cap->second].emplace_back(seq, us);
    return;
  }
  double& free_at = stream_free(s);
  double start = std::max(free_at, host_us_);
  free_at = start + us;
  add(Timing{seq, static_cast<uint64_t>(start * 1000), static_cast<uint64_t>(free_at * 1000)});
}

// Every operation: its OpCommon, the record, what belongs to it (a kernel's accesses), then
// its simulated GPU interval.
template <class Op>
uint64_t RankTraceBuilder::issue(StreamId s, Op op, double us, const std::vector<Record>& attached) {
  op.op = op_on(s);
  add(op);
  for (Record r : attached) {
    if (auto* a = std::get_if<Access>(&r)) a->op_seq = op.op.seq;
    add(r);
  }
  attach_stack(op.op.seq);
  emit_timing(op.op.seq, s, us);
  return op.op.seq;
}

uint64_t RankTraceBuilder::kernel(StreamId s, const std::string& name, const std::vector<KernelAccess>& accesses,
                                  double us, FootprintTier tier) {
  Kernel k;
  k.name = intern(name);
  k.grid[0] = 128;
  k.block[0] = 256;
  std::vector<Record> footprint;
  for (const KernelAccess& a : accesses) footprint.push_back(Access{0, a.ptr, a.bytes, a.mode, a.tier.value_or(tier)});
  return issue(s, k, us, footprint);
}

uint64_t RankTraceBuilder::kernel_with_params(StreamId s, const std::string& name, const std::string& params,
                                              double us) {
  Kernel k;
  k.name = intern(name);
  k.params = params;
  return issue(s, k, us, {});
}

namespace {

Memcpy copy_record(uint64_t dst, uint64_t src, uint64_t bytes, MemcpyKind kind, uint32_t flags) {
  Memcpy m;
  m.dst = dst;
  m.src = src;
  m.width = bytes;
  m.kind = kind;
  m.flags = flags;
  return m;
}

Memset fill_record(uint64_t dst, uint64_t bytes, uint32_t value, uint32_t flags) {
  Memset m;
  m.dst = dst;
  m.width = bytes;
  m.value = value;
  m.flags = flags;
  return m;
}

}  // namespace

uint64_t RankTraceBuilder::memcpy(StreamId s, uint64_t dst, uint64_t src, uint64_t bytes, MemcpyKind kind, double us) {
  return issue(s, copy_record(dst, src, bytes, kind, 0), us);
}

uint64_t RankTraceBuilder::memcpy_sync(uint64_t dst, uint64_t src, uint64_t bytes, MemcpyKind kind, bool pageable,
                                       double us) {
  StreamId s = legacy_stream();
  const uint32_t flags = kMemSync | (pageable ? uint32_t(kMemPageableHost) : 0u);
  uint64_t seq = issue(s, copy_record(dst, src, bytes, kind, flags), us);
  if (kind != MemcpyKind::DeviceToDevice) host_us_ = std::max(host_us_, stream_free(s));
  return seq;
}

uint64_t RankTraceBuilder::memset(StreamId s, uint64_t dst, uint64_t bytes, uint32_t value, double us) {
  return issue(s, fill_record(dst, bytes, value, 0), us);
}

uint64_t RankTraceBuilder::memset_sync(uint64_t dst, uint64_t bytes, uint32_t value, double us) {
  return issue(legacy_stream(), fill_record(dst, bytes, value, kMemSync), us);
}

uint64_t RankTraceBuilder::host_func(StreamId s, double us) { return issue(s, HostFunc{}, us); }

uint64_t RankTraceBuilder::nccl(StreamId s, NcclKind kind, uint64_t sendbuf, uint64_t recvbuf, uint64_t count,
                                uint64_t comm, double us, int peer, uint8_t elem_bytes) {
  return nccl_call(s, kind, sendbuf, recvbuf, count, comm, static_cast<uint32_t>(rank_),
                   static_cast<uint32_t>(world_size_), peer, elem_bytes, us);
}

uint64_t RankTraceBuilder::nccl_in_group(StreamId s, NcclKind kind, uint64_t sendbuf, uint64_t recvbuf, uint64_t count,
                                         uint64_t comm, uint32_t comm_rank, uint32_t comm_size, int peer) {
  return nccl_call(s, kind, sendbuf, recvbuf, count, comm, comm_rank, comm_size, peer, 4, 20);
}

uint64_t RankTraceBuilder::nccl_call(StreamId s, NcclKind kind, uint64_t sendbuf, uint64_t recvbuf, uint64_t count,
                                     uint64_t comm, uint32_t comm_rank, uint32_t comm_size, int peer,
                                     uint8_t elem_bytes, double us) {
  Nccl n;
  n.kind = kind;
  n.sendbuf = sendbuf;
  n.recvbuf = recvbuf;
  n.count = count;
  n.dtype = 7;  // ncclFloat32
  n.elem_bytes = elem_bytes;
  n.peer = peer;
  n.comm = comm;
  n.rank = comm_rank;
  n.nranks = comm_size;
  n.comm_seq = comm_seq_[comm]++;
  return issue(s, n, us);
}

EventId RankTraceBuilder::event(uint32_t flags) {
  EventId e = next_event_++;
  add(EventCreate{e, flags});
  host_us_ += kApiCallUs;
  return e;
}

void RankTraceBuilder::record(EventId e, StreamId s) {
  const uint64_t seq = next_seq();
  add(EventRecord{seq, e, s});
  attach_stack(seq);
  event_time_us_[e] = std::max(stream_free(s), host_us_);
  host_us_ += kApiCallUs;
}

void RankTraceBuilder::wait(StreamId s, EventId e) {
  const uint64_t seq = next_seq();
  add(EventWait{seq, s, e});
  attach_stack(seq);
  if (auto it = event_time_us_.find(e); it != event_time_us_.end())
    stream_free(s) = std::max(stream_free(s), it->second);
  host_us_ += kApiCallUs;
}

void RankTraceBuilder::event_sync(EventId e) {
  const uint64_t seq = next_seq();
  add(EventSync{seq, e});
  attach_stack(seq);
  if (auto it = event_time_us_.find(e); it != event_time_us_.end()) host_us_ = std::max(host_us_, it->second);
  host_us_ += kApiCallUs;
}

void RankTraceBuilder::event_query(EventId e, bool complete) {
  const uint64_t seq = next_seq();
  add(EventQuery{seq, e, complete});
  attach_stack(seq);
  host_us_ += kApiCallUs;
}

void RankTraceBuilder::stream_sync(StreamId s) {
  const uint64_t seq = next_seq();
  add(StreamSync{seq, s});
  attach_stack(seq);
  host_us_ = std::max(host_us_, stream_free(s)) + kApiCallUs;
}

void RankTraceBuilder::stream_query(StreamId s, bool complete) {
  const uint64_t seq = next_seq();
  add(StreamQuery{seq, s, complete});
  attach_stack(seq);
  host_us_ += kApiCallUs;
}

void RankTraceBuilder::device_sync() {
  const uint64_t seq = next_seq();
  add(DeviceSync{seq, 0});
  attach_stack(seq);
  for (auto& [s, t] : stream_free_us_) host_us_ = std::max(host_us_, t);
  host_us_ += kApiCallUs;
}

GraphId RankTraceBuilder::begin_capture(StreamId s) {
  const GraphId g = next_graph_++;
  begin_capture_into(s, g, /*named=*/false);
  return g;
}

void RankTraceBuilder::begin_capture_into(StreamId s, GraphId g, bool named) {
  const uint64_t seq = next_seq();
  // As the tracer writes it: a plain capture names its graph only at the end.
  add(CaptureBegin{seq, s, named ? g : 0});
  attach_stack(seq);
  capturing_[s] = g;
}

void RankTraceBuilder::end_capture(StreamId s, GraphId g) {
  const uint64_t seq = next_seq();
  add(CaptureEnd{seq, s, g});
  attach_stack(seq);
  capturing_.erase(s);
}

uint64_t RankTraceBuilder::graph_launch(StreamId s, GraphId g) {
  double total = 0;
  for (const auto& [seq, us] : graph_ops_[g]) total += us;
  return issue(s, GraphLaunch{{}, g}, total);
}

ModuleId RankTraceBuilder::module(const std::string& path, uint64_t base, uint64_t size, const std::string& build_id) {
  const ModuleId id = next_module_++;
  add(ModuleDef{id, intern(path), base, size, intern(build_id)});
  return id;
}

CallsiteId RankTraceBuilder::stack(const std::vector<BuilderFrame>& innermost_first) {
  CallsiteId parent = 0;
  for (auto f = innermost_first.rbegin(); f != innermost_first.rend(); ++f) {
    const auto key = std::make_tuple(static_cast<int>(f->kind), f->file, f->line, f->function, f->module, f->offset);
    auto frame = frames_.find(key);
    if (frame == frames_.end()) {
      const auto id = static_cast<FrameId>(frames_.size() + 1);
      add(FrameDef{id, f->kind, intern(f->file), intern(f->function), f->line, f->module, f->offset});
      frame = frames_.emplace(key, id).first;
    }
    auto [site, inserted] = callsites_.try_emplace({parent, frame->second}, static_cast<CallsiteId>(callsites_.size() + 1));
    if (inserted) add(CallsiteDef{site->second, parent, frame->second});
    parent = site->second;
  }
  return parent;
}

TraceBuilder::TraceBuilder(int world_size) {
  for (int r = 0; r < world_size; ++r) ranks_.push_back(std::make_unique<RankTraceBuilder>(r, world_size));
}

void TraceBuilder::write_dir(const std::string& dir) const {
  std::filesystem::create_directories(dir);
  for (size_t r = 0; r < ranks_.size(); ++r) ranks_[r]->write(dir + "/rank" + std::to_string(r) + ".shz");
}

}  // namespace streamhaz::trace
