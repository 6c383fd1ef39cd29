// Recorder, core: threads, strings and names, stream and event ids, operation stamps, and
// which operations wait for GPU times. The other recorder_*.cpp files hold one topic each.
#include "streamhaz/tracer/recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

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

CallsiteId Recorder::emit_with_stack(const Record& r) {
  StackNeed need;
  const uint64_t seq = stacked_seq(r, need);
  if (seq == 0) {
    sink_.add(r);
    return 0;
  }
  // Definitions first (they may come before the record), the reference after it.
  const size_t n = stack_source_->capture(need, stack_scratch_, kMaxStackFrames);
  CallsiteId site;
  {
    PhaseTimer timer(Phase::StackIntern);
    site = stacks_->intern(std::span<const RawFrame>(stack_scratch_, n), *stack_source_);
  }
  sink_.add(r);
  if (site == 0) return 0;
  if (need == StackNeed::KernelLaunch) kernel_stack_ = StackRef{seq, site};
  else sink_.add(StackRef{seq, site});
  return site;
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

Recorder::KernelFunction Recorder::kernel_function(const KernelLaunch& k) {
  if (k.function == 0) {
    const std::string_view name = k.name.view();
    return {intern(name), operand_array_param(name), unfilled_slots_param(name)};
  }
  if (const KernelFunction* known = functions_.find(k.function)) return *known;
  const std::string_view name = k.name.view();
  const KernelFunction f{intern(name), operand_array_param(name), unfilled_slots_param(name)};
  functions_.try_emplace(k.function, f);
  return f;
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

}  // namespace streamhaz::tracer
