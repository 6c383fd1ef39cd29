// The happens-before rules of docs/analysis.md, one handler per record kind. Where CUDA or NCCL
// does not guarantee an ordering, no edge is added: a missing edge shows up as a report, a
// wrong edge would hide a race.
#include "engine/rank_engine.h"

#include <algorithm>

#include "engine/pointer_evidence.h"

namespace streamhaz::analysis {

using trace::AccessMode;

namespace {
// An operation's byte ranges are exact only if every range is: a finding names one
// operation, not the range of it that conflicted.
bool all_exact(const std::vector<ByteRange>& ranges) {
  return std::all_of(ranges.begin(), ranges.end(), [](const ByteRange& b) { return b.exact; });
}
}  // namespace

RankEngine::RankEngine(int rank, uint32_t index, TimelineRegistry* shared_timelines, CollectiveMatcher& collectives,
                       FindingCollector& findings, const EngineOptions& options)
    : rank_(rank),
      index_(index),
      timelines_(shared_timelines ? *shared_timelines : own_timelines_),
      collectives_(collectives),
      findings_(findings),
      options_(options) {
  shadow_.keep_all_readers(options.keep_all_readers);
  shadow_.expect_phantoms(options.phantom_ops != nullptr);
  pass_checks_ = options.order_checks || options.phantom_ops || options.on_ordered_by_sites;
  pointer_shadow_.keep_all(options.keep_all_readers);
  if (options.order_checks)  // this rank's pairs only (sorted by rank first)
    for (auto p = options.order_checks->lower_bound({rank, 0, 0});
         p != options.order_checks->end() && std::get<0>(*p) == rank; ++p) {
      check_first_.try_emplace(std::get<1>(*p), Epoch{});
      check_second_[std::get<2>(*p)].push_back(std::get<1>(*p));
    }
  on(trace::HostThread{0});
}

void RankEngine::note_order(uint64_t seq, Epoch e, const VectorClock& now) {
  if (auto later = check_second_.find(seq); later != check_second_.end())
    for (uint64_t a : later->second) {
      // An earlier side not issued yet orders nothing: the pair is reported unordered.
      auto first = check_first_.find(a);
      if (first == check_first_.end() || first->second.clock == 0 || !now.covers(first->second))
        options_.on_conflict(rank_, a, seq, 0);
    }
  if (auto first = check_first_.find(seq); first != check_first_.end()) first->second = e;
}

void RankEngine::apply(const trace::Record& r) {
  // A kernel's footprint arrives as the Access records after it; it is checked once the
  // next record that can change the ordering state comes (stack records change nothing).
  if (pending_.active && !std::holds_alternative<trace::Access>(r) && !std::holds_alternative<trace::Timing>(r) &&
      !std::holds_alternative<trace::StringDef>(r) && !trace::is_stack_record(r))
    flush_pending();
  current_ = &r;
  std::visit([this](const auto& rec) { on(rec); }, r);
}

void RankEngine::finish() {
  flush_pending();
  hand_over_ahead_posts();
}

void RankEngine::resume() {
  const Blocked b = *blocked_;
  blocked_.reset();
  receive(b.key, b.slot, b.comm_rank);
}

void RankEngine::receive(const CollectiveKey& key, uint32_t slot, uint32_t comm_rank) {
  StreamState& s = streams_[slot];
  FrontierRef knowledge = collectives_.take(key, index_, comm_rank, posted_known_, s.clock);
  posted_known_.clear();
  if (knowledge) note_receipt(s, std::move(knowledge));
}

void RankEngine::note_receipt(StreamState& s, Known knowledge) {
  // A tick of its own marks the receipt: a clock covers it iff it descends from the stream
  // after the join, so it knows the frontier noted here.
  const Epoch e = s.clock.tick(s.timeline);
  receipts_.add(s.timeline, e.clock, std::move(knowledge));
  if (receipts_.wants_pruning(s.timeline)) prune_receipts(s.timeline);
}

void RankEngine::prune_receipts(TimelineId t) {
  std::vector<ClockValue>& live = live_scratch_;
  live.clear();
  for (const StreamState& s : streams_) {
    live.push_back(s.clock.get(t));
    live.push_back(s.legacy_pending.get(t));
  }
  for (const auto& [tid, h] : hosts_) live.push_back(h.clock.get(t));
  for (const EventState& ev : events_by_id_) live.push_back(ev.clock.get(t));
  for (const auto& [id, ev] : events_) live.push_back(ev.clock.get(t));
  for (const auto& [id, c] : replay_events_) live.push_back(c.get(t));
  receipts_.prune(t, live);
}

// --- streams, events, host ---------------------------------------------------------------

uint32_t RankEngine::new_slot(trace::StreamId id, uint32_t device, uint32_t flags, bool by_id) {
  StreamState s;
  s.id = id;
  s.timeline = timelines_.add();
  s.device = device;
  s.flags = flags;
  streams_.push_back(std::move(s));
  const auto slot = static_cast<uint32_t>(streams_.size() - 1);
  if (by_id && id < kDirectStreamIds) {
    if (id >= slot_by_id_.size()) slot_by_id_.resize(id + 1, 0);
    slot_by_id_[id] = slot + 1;
  } else if (by_id) {
    slot_by_large_id_[id] = slot + 1;
  }
  return slot;
}

RankEngine::StreamState* RankEngine::known_stream(trace::StreamId id) {
  uint32_t slot_plus_one = 0;
  if (id < slot_by_id_.size()) {
    slot_plus_one = slot_by_id_[id];
  } else if (id >= kDirectStreamIds) {
    auto it = slot_by_large_id_.find(id);
    if (it != slot_by_large_id_.end()) slot_plus_one = it->second;
  }
  return slot_plus_one ? &streams_[slot_plus_one - 1] : nullptr;
}

uint32_t RankEngine::slot_of_any(trace::StreamId id) {
  if (replaying_) {
    auto it = replaying_->branch.find(id);
    if (it != replaying_->branch.end()) return it->second;
  }
  if (const StreamState* s = known_stream(id)) return static_cast<uint32_t>(s - streams_.data());
  // A stream used without a creation record: handle 0 is the legacy stream, anything else
  // is taken as an ordinary blocking stream of device 0.
  return new_slot(id, 0, id == 0 ? uint32_t(trace::kStreamLegacyDefault) : 0u, true);
}

RankEngine::EventState& RankEngine::event(trace::EventId id) {
  if (id >= kDirectEventIds) return events_[id];
  if (id >= events_by_id_.size()) events_by_id_.resize(id + 1);
  return events_by_id_[id];
}

void RankEngine::sync_with_host(StreamState& s) {
  if (replaying_) return;  // graph work was issued at its launch, already joined there
  if (s.host_seen == host_ && s.host_version_seen == host_->version) return;
  s.clock.join(host_->clock);
  s.host_seen = host_;
  s.host_version_seen = host_->version;
}

void RankEngine::host_joins(const VectorClock& c, EdgeSites via) {
  if (host_->clock.join_via(c, via)) ++host_->version;
}

EdgeSites RankEngine::site_of(uint64_t seq) const {
  if (!options_.sync_sites) return {};
  auto it = options_.sync_sites->find({rank_, seq});
  return it != options_.sync_sites->end() ? EdgeSites{it->second.site, it->second.group} : EdgeSites{};
}

bool RankEngine::barrier_skipped() const {
  if (!options_.skip_syncs || replaying_ || !current_) return false;
  const trace::OpCommon* op = trace::op_common(*current_);
  return op && options_.skip_syncs->count({rank_, op->seq});
}

Epoch RankEngine::enqueue(uint32_t slot, bool tick) {
  StreamState& s = streams_[slot];
  sync_with_host(s);
  if (s.legacy_pending.size()) {  // a command on a blocking stream waits for earlier legacy work
    s.clock.join(s.legacy_pending);
    s.legacy_pending = VectorClock{};
  }
  const bool barrier = s.legacy() && !barrier_skipped();
  const EdgeSites barrier_site = barrier && current_ && trace::op_common(*current_) && !replaying_
                                     ? site_of(trace::op_common(*current_)->seq)
                                     : EdgeSites{};
  // The legacy default stream waits for all blocking streams of its device...
  if (barrier)
    for (const StreamState& b : streams_)
      if (b.blocking() && b.device == s.device) s.clock.join_via(b.clock, barrier_site);
  Epoch e{s.timeline, s.clock.get(s.timeline)};
  if (tick) e = s.clock.tick(s.timeline);
  if (tick && checking_order() && current_) [[unlikely]] {
    const trace::OpCommon* op = trace::op_common(*current_);
    const auto* free = std::get_if<trace::Free>(current_);
    if (op || free) note_order(op ? op->seq : free->seq, e, s.clock);
  }
  // ...and work issued later on any blocking stream waits for it (at that stream's next
  // command, not before: cudaStreamSynchronize of a blocking stream does not wait for it).
  if (barrier)
    for (StreamState& b : streams_)
      if (b.blocking() && b.device == s.device) b.legacy_pending.join_via(s.clock, barrier_site);
  return e;
}

OpStamp RankEngine::stamp(const trace::OpCommon& op, Epoch e, uint32_t slot, OpKind kind, trace::StringId name,
                          uint8_t flags) const {
  OpStamp st;
  st.seq = op.seq;
  st.epoch = e;
  st.stream_slot = slot;
  st.name = name;
  st.nvtx = op.nvtx;
  st.kind = kind;
  st.flags = flags | (replaying_ ? uint8_t(kOpInGraph) : uint8_t(0));
  return st;
}

void RankEngine::on(const trace::StringDef& r) {
  strings_[r.id] = r.text;
}

void RankEngine::on(const trace::HostThread& r) {
  // Default: one host timeline per process in observed API order. Strict: one per thread.
  const uint64_t key = options_.per_thread_host ? r.tid : 0;
  auto [it, fresh] = hosts_.try_emplace(key);
  if (fresh) {
    it->second.timeline = timelines_.add();
    it->second.clock.tick(it->second.timeline);
  }
  host_ = &it->second;
}

void RankEngine::on(const trace::StreamCreate& r) {
  if (StreamState* s = known_stream(r.stream)) {
    s->device = r.device;
    s->flags = r.flags;
    return;
  }
  new_slot(r.stream, r.device, r.flags, true);
}

void RankEngine::on(const trace::StreamName& r) { stream(r.stream).name = r.name; }

void RankEngine::on(const trace::EventCreate& r) { event(r.event); }

void RankEngine::on(const trace::EventRecord& r) {
  if (replaying_) {  // a captured record: a dependency inside the graph only
    replay_events_[r.event] = streams_[slot_of(r.stream)].clock;
    return;
  }
  if (CapturedGraph* g = captured(*current_, r.stream)) {
    (void)g;
    EventState& ev = event(r.event);
    ev.captured_in = stream(r.stream).capturing;
    // The record is now a node of the graph: an earlier eager record no longer describes the
    // event, and waiting on it outside the capture promises no order (no edge, not a stale one).
    ev.recorded = false;
    ev.clock = VectorClock{};
    return;
  }
  const uint32_t slot = slot_of(r.stream);
  enqueue(slot, false);
  EventState& ev = event(r.event);
  ev.clock = streams_[slot].clock;  // the event fires once everything before it on the stream has
  ev.recorded = true;
  ev.captured_in = 0;
}

void RankEngine::on(const trace::EventWait& r) {
  if (replaying_) {
    auto it = replay_events_.find(r.event);
    if (it != replay_events_.end()) streams_[slot_of(r.stream)].clock.join_via(it->second, site_of(r.seq));
    return;  // a wait on an event from outside the capture: no edge
  }
  const trace::GraphId from_capture = event(r.event).captured_in;
  if (from_capture && !stream(r.stream).capturing) {
    auto g = graphs_.find(from_capture);
    if (g != graphs_.end() && g->second.open) stream(r.stream).capturing = from_capture;  // joins the capture
  }
  if (captured(*current_, r.stream)) return;
  const EventState& ev = event(r.event);
  if (!ev.recorded) return;  // waiting on a never-recorded event is a no-op in CUDA
  stream(r.stream).clock.join_via(ev.clock, site_of(r.seq));
}

void RankEngine::on(const trace::EventSync& r) {
  const EventState& ev = event(r.event);
  if (ev.recorded) host_joins(ev.clock, site_of(r.seq));
}

void RankEngine::on(const trace::EventQuery& r) {
  if (!r.complete) return;  // cudaErrorNotReady promises nothing
  const EventState& ev = event(r.event);
  if (!ev.recorded) return;
  if (options_.on_idle_query && host_->clock.covers_all(ev.clock)) options_.on_idle_query(rank_, r.seq);
  host_joins(ev.clock);
}

void RankEngine::on(const trace::StreamSync& r) { host_joins(stream(r.stream).clock, site_of(r.seq)); }

void RankEngine::on(const trace::StreamQuery& r) {
  if (!r.complete) return;
  const VectorClock& c = stream(r.stream).clock;
  if (options_.on_idle_query && host_->clock.covers_all(c)) options_.on_idle_query(rank_, r.seq);
  host_joins(c);
}

void RankEngine::on(const trace::DeviceSync& r) {
  const EdgeSites site = site_of(r.seq);
  for (const StreamState& s : streams_)
    if (s.device == r.device) host_joins(s.clock, site);
}

// --- operations --------------------------------------------------------------------------

void RankEngine::on(const trace::Kernel& r) {
  if (CapturedGraph* g = captured(*current_, r.op.stream)) {
    g->last_kernel_seq = r.op.seq;
    return;
  }
  const uint32_t slot = slot_of(r.op.stream);
  const Epoch e = enqueue(slot);
  ++operations_;
  pending_.active = true;
  pending_.op = stamp(r.op, e, slot, OpKind::Kernel, r.name);
  pending_.slot = slot;
  pending_.ranges.clear();
  pending_.pointers.clear();
  if (summaries_) add_summary_ranges(r);
}

void RankEngine::add_summary_ranges(const trace::Kernel& k) {
  auto [it, fresh] = summary_of_name_.try_emplace(k.name, nullptr);
  if (fresh) it->second = summaries_->find(text(k.name));
  const KernelSummary* summary = it->second;
  if (!summary) return;
  EvaluateStatus status = EvaluateStatus::Ok;
  const std::vector<KernelRange> ranges = evaluate(*summary, k.params, &status);
  if (status != EvaluateStatus::Ok) {
    ++summary_unused_;
    return;
  }
  for (const KernelRange& r : ranges) {
    uint64_t hi;
    if (r.bytes) {
      hi = range_end(r.ptr, *r.bytes);
    } else {  // unknown extent: the rest of the allocation (or the one byte, if untracked)
      const Allocation* a = book_.allocation_at(r.ptr);
      hi = a ? range_end(a->base, a->bytes) : range_end(r.ptr, 1);
    }
    pending_.ranges.push_back({r.ptr, hi, r.mode, false});
  }
  if (!ranges.empty()) pending_.op.tier = trace::FootprintTier::Static;
}


void RankEngine::on(const trace::Access& r) {
  if (pending_.active && pending_.op.seq == r.op_seq && r.tier == trace::FootprintTier::Pointer) {
    pending_.pointers.push_back({r.ptr, r.mode});
    return;
  }
  if (pending_.active && pending_.op.seq == r.op_seq) {
    // Static summaries may fall back to "rest of the allocation", coarse ranges round to 32 KiB:
    // not exact.
    pending_.ranges.push_back({r.ptr, range_end(r.ptr, r.bytes), r.mode, trace::tier_facts(r.tier).exact_ranges});
    pending_.op.tier = pending_.ranges.size() == 1 ? r.tier : weaker_tier(pending_.op.tier, r.tier);
    return;
  }
  if (replaying_) return;
  for (auto& [id, g] : graphs_) {
    if (g.open && g.last_kernel_seq == r.op_seq) {
      g.records.push_back(*current_);
      return;
    }
  }
}

void RankEngine::flush_pending() {
  if (!pending_.active) return;
  pending_.active = false;
  OpStamp op = pending_.op;
  const VectorClock& now = streams_[pending_.slot].clock;
  if (!pending_.ranges.empty()) {
    ++kernels_by_tier_[static_cast<size_t>(op.tier)];
    op.exact = all_exact(pending_.ranges);
    for (const ByteRange& b : pending_.ranges) touch(op, b, now);
    // A pointer argument into bytes no range of a stronger tier covers is still evidence: the
    // kernel may reach memory its summary or instrumentation did not see (a struct member, a
    // TMA copy that Compute Sanitizer does not report).
    // Such a pointer is weak evidence (the stronger footprint saw no access there): possible races only.
    std::erase_if(pending_.pointers, [&](const PointerArg& p) {
      return std::any_of(pending_.ranges.begin(), pending_.ranges.end(),
                         [&p](const ByteRange& b) { return b.lo <= p.addr && p.addr < b.hi; });
    });
    if (!pending_.pointers.empty()) {
      OpStamp weak = op;
      weak.tier = trace::FootprintTier::Pointer;
      weak.exact = false;
      weak.flags |= kOpPointerFallback;
      touch_pointers(weak, pending_.pointers, now);
    }
  } else if (!pending_.pointers.empty()) {
    ++kernels_by_tier_[static_cast<size_t>(trace::FootprintTier::Pointer)];
    op.tier = trace::FootprintTier::Pointer;
    op.exact = false;
    touch_pointers(op, pending_.pointers, now);
  } else {
    ++without_footprint_;  // ordering only
    return;
  }
  report_conflicts(op);
}

RankEngine::HostWait RankEngine::host_wait_for_copy(const trace::Memcpy& m) const {
  using K = trace::MemcpyKind;
  const bool pageable = m.flags & trace::kMemPageableHost;
  switch (m.kind) {
    case K::HostToHost:
    case K::DeviceToHost: return HostWait::After;  // returns once the copy is done
    case K::HostToDevice: return pageable ? HostWait::Before : HostWait::After;
    case K::DeviceToDevice:
    case K::Peer: return HostWait::None;
    case K::Default: {  // direction inferred from the pointers (UVA)
      const auto dst_dev = book_.is_device(m.dst), src_dev = book_.is_device(m.src);
      if (dst_dev == false || (pageable && src_dev == true)) return HostWait::After;
      if (dst_dev == true && (src_dev == false || pageable)) return pageable ? HostWait::Before : HostWait::After;
      return HostWait::None;
    }
  }
  return HostWait::None;
}

void RankEngine::on(const trace::Memcpy& r) {
  if (captured(*current_, r.op.stream)) return;
  const uint32_t slot = slot_of(r.op.stream);
  const bool sync = (r.flags & trace::kMemSync) && !replaying_;
  const HostWait wait = sync ? host_wait_for_copy(r) : HostWait::None;
  if (wait == HostWait::Before) {  // pageable source: the stream is drained before the copy
    enqueue(slot, false);
    host_joins(streams_[slot].clock);
  }
  const Epoch e = enqueue(slot);
  ++operations_;
  OpStamp op = stamp(r.op, e, slot, memcpy_op_kind(r.kind), 0, sync ? uint8_t(kOpSync) : uint8_t(0));
  ranges_.clear();
  memcpy_footprint(r, ranges_);
  op.exact = all_exact(ranges_);
  for (const ByteRange& b : ranges_) touch(op, b, streams_[slot].clock);
  report_conflicts(op);
  if (wait == HostWait::After) host_joins(streams_[slot].clock);
}

void RankEngine::on(const trace::Memset& r) {
  if (captured(*current_, r.op.stream)) return;
  const uint32_t slot = slot_of(r.op.stream);
  const Epoch e = enqueue(slot);  // cudaMemset: a legacy-stream operation, the host does not wait
  ++operations_;
  OpStamp op = stamp(r.op, e, slot, OpKind::MemsetOp, 0, (r.flags & trace::kMemSync) ? uint8_t(kOpSync) : uint8_t(0));
  ranges_.clear();
  memset_footprint(r, ranges_);
  op.exact = all_exact(ranges_);
  for (const ByteRange& b : ranges_) touch(op, b, streams_[slot].clock);
  report_conflicts(op);
}

void RankEngine::on(const trace::HostFunc& r) {
  if (captured(*current_, r.op.stream)) return;
  enqueue(slot_of(r.op.stream));  // an operation on its stream; host memory is out of scope
  ++operations_;
}

void RankEngine::on(const trace::Nccl& r) {
  if (captured(*current_, r.op.stream)) return;
  const uint32_t slot = slot_of(r.op.stream);
  // Cross-rank edges only outside graph replays: a rank cannot wait in the middle of one.
  const bool cross_rank = is_collective(r) && !replaying_ && !options_.local_order;
  if (cross_rank) {
    enqueue(slot, false);
    collective_start_ = streams_[slot].clock;  // what is ordered before the call starts on this rank
  }
  const Epoch e = enqueue(slot);
  ++operations_;
  const OpStamp op = stamp(r.op, e, slot, nccl_op_kind(r.kind));
  ranges_.clear();
  nccl_ranges(r, ranges_);
  for (const ByteRange& b : ranges_) touch(op, b, streams_[slot].clock);
  report_conflicts(op);
  if (!cross_rank) return;
  const CollectiveKey key{r.comm, r.comm_seq};
  posted_known_.clear();
  if (collectives_.projected()) receipts_.known(collective_start_, posted_known_);
  const bool ahead = may_run_ahead(r);
  if (collectives_.run_ahead()) posted_bound_.join(collective_start_);
  if (ahead) {
    run_ahead(r, slot);
    return;
  }
  ran_ahead_ = 0;
  hand_over_ahead_posts();
  if (collectives_.post(index_, r, collective_start_, posted_known_)) blocked_ = Blocked{key, slot, r.rank};
  else receive(key, slot, r.rank);
}

bool RankEngine::may_run_ahead(const trace::Nccl& r) const {
  if (ran_ahead_ >= collectives_.run_ahead()) return false;  // also: a limit of 0, running ahead off
  if (!everyone_receives(r.kind)) return false;
  // What the call can bring this rank is what other ranks learnt of it, all from this rank's
  // earlier starts: when this start covers them, the guess "nothing" is likely right (the
  // matcher checks it; other ranks could still learn a later start of another stream).
  return collective_start_.covers_all(posted_bound_);
}

void RankEngine::run_ahead(const trace::Nccl& r, uint32_t slot) {
  ++ran_ahead_;
  if (ahead_buffered_ == ahead_posts_.size()) ahead_posts_.emplace_back();
  AheadPost& post = ahead_posts_[ahead_buffered_++];
  post.call = r;
  post.start = collective_start_;
  post.known.assign(posted_known_.begin(), posted_known_.end());
  post.promise = std::make_shared<FrontierPromise>();
  note_receipt(streams_[slot], Known(post.promise));
}

void RankEngine::hand_over_ahead_posts() {
  if (!ahead_buffered_) return;
  collectives_.post_ahead(index_, {ahead_posts_.data(), ahead_buffered_});
  for (size_t i = 0; i < ahead_buffered_; ++i) {
    ahead_posts_[i].known.clear();
    ahead_posts_[i].promise.reset();
  }
  ahead_buffered_ = 0;
}

namespace {
// The same earlier operation on overlapping or adjacent bytes: one pair, roles combined.
template <class OpConflictT>
void gather(std::vector<OpConflictT>& into, const Conflict& c, AccessMode second_role) {
  for (OpConflictT& oc : into) {
    if (oc.c.first == c.first && c.lo <= oc.c.hi && oc.c.lo <= c.hi) {
      oc.c.first_role = static_cast<AccessMode>(uint8_t(oc.c.first_role) | uint8_t(c.first_role));
      oc.second_role = static_cast<AccessMode>(uint8_t(oc.second_role) | uint8_t(second_role));
      oc.c.lo = std::min(oc.c.lo, c.lo);
      oc.c.hi = std::max(oc.c.hi, c.hi);
      return;
    }
  }
  into.push_back({c, second_role});
}
bool writes(AccessMode m) { return uint8_t(m) & uint8_t(AccessMode::Write); }
}  // namespace

// --- memory ------------------------------------------------------------------------------

void RankEngine::on(const trace::Alloc& r) {
  // Fresh memory has no history: cudaFree/cudaFreeAsync ordered the previous owner's work
  // before it (checked when the free was applied).
  book_.allocate(r);
  shadow_.forget(r.ptr, range_end(r.ptr, r.bytes));
  pointer_shadow_.forget(r.ptr, range_end(r.ptr, r.bytes));
}

void RankEngine::on(const trace::Free& r) {
  const Allocation* known = book_.allocation_at(r.ptr);
  if (!known || known->base != r.ptr) return;
  const Allocation a = *known;  // findings name the bytes: forget the allocation last
  if (r.kind == trace::AllocKind::Async) {
    // cudaFreeAsync: a stream-ordered write-like release; the pool orders the reuse.
    const uint32_t slot = slot_of(r.stream);
    const Epoch e = enqueue(slot);
    const OpStamp op = stamp(trace::OpCommon{r.seq, r.stream, 0}, e, slot, OpKind::FreeAsync);
    touch(op, ByteRange{a.base, range_end(a.base, a.bytes), AccessMode::Write, true}, streams_[slot].clock);
    report_conflicts(op);
    book_.release(r.ptr);
    return;
  }
  // cudaFree waits for the whole device first; host and VMM frees promise no such wait.
  if (r.kind == trace::AllocKind::Device || r.kind == trace::AllocKind::Managed)
    for (const StreamState& s : streams_)
      if (s.device == a.device) host_joins(s.clock);
  const Epoch e = host_->clock.tick(host_->timeline);
  ++host_->version;
  OpStamp op;
  op.seq = r.seq;
  op.epoch = e;
  op.stream_slot = kHostSlot;
  op.kind = OpKind::Free;
  op.flags = kOpHostSide;
  if (checking_order()) {
    note_order(r.seq, e, host_->clock);
    book_.release(r.ptr);
    return;
  }
  std::vector<Conflict>* ordered = tracing_sites() ? &ordered_scratch_ : nullptr;
  shadow_.release(a.base, range_end(a.base, a.bytes), op, host_->clock, conflicts_, ordered);
  for (const Conflict& c : conflicts_) report(c, op, AccessMode::Write);
  if (ordered)
    for (const Conflict& c : *ordered) gather(op_ordered_, c, AccessMode::Write);
  conflicts_.clear();
  pointer_shadow_.touched(a.base, range_end(a.base, a.bytes), AccessMode::Write, op, host_->clock, conflicts_, ordered);
  for (const Conflict& c : conflicts_) {
    const Evidence e = judge(Side{c.first, c.first_role}, Side{op, AccessMode::Write});
    if (e != Evidence::None) report(c, op, AccessMode::Write, e == Evidence::Possible);
  }
  if (ordered)
    for (const Conflict& c : *ordered)
      if (judge(Side{c.first, c.first_role}, Side{op, AccessMode::Write}) != Evidence::None)
        gather(op_ordered_, c, AccessMode::Write);
  report_ordered(op);
  pointer_shadow_.forget(a.base, range_end(a.base, a.bytes));
  book_.release(r.ptr);
}

void RankEngine::on(const trace::BufferName& r) { book_.name(r); }


void RankEngine::touch(const OpStamp& op, const ByteRange& b, const VectorClock& now) {
  if (pass_checks_) return touch_for_pass(op, b, now);
  shadow_.access(b.lo, b.hi, b.mode, op, now, conflicts_);
  for (const Conflict& c : conflicts_) gather(op_conflicts_, c, b.mode);
  if (!pointer_shadow_.empty()) {
    pointer_conflicts_.clear();
    pointer_shadow_.touched(b.lo, b.hi, b.mode, op, now, pointer_conflicts_);
    for (const Conflict& c : pointer_conflicts_) gather_pointer_conflict(c, op, b.mode);
  }
}

void RankEngine::touch_for_pass(const OpStamp& op, const ByteRange& b, const VectorClock& now) {
  if (checking_order()) return;
  std::vector<Conflict>* ordered = tracing_sites() ? &ordered_scratch_ : nullptr;
  using Phantom = ShadowMemory::Phantom;
  const Phantom phantom = !options_.phantom_ops || !options_.phantom_ops->count({rank_, op.seq}) ? Phantom::No
                          : options_.lasting_phantom_ops && options_.lasting_phantom_ops->count({rank_, op.seq})
                              ? Phantom::Lasting
                              : Phantom::Yes;
  shadow_.access(b.lo, b.hi, b.mode, op, now, conflicts_, ordered, phantom);
  for (const Conflict& c : conflicts_) gather(op_conflicts_, c, b.mode);
  if (ordered)
    for (const Conflict& c : *ordered) gather(op_ordered_, c, b.mode);
  if (!pointer_shadow_.empty()) {
    pointer_conflicts_.clear();
    if (ordered) ordered->clear();
    pointer_shadow_.touched(b.lo, b.hi, b.mode, op, now, pointer_conflicts_, ordered);
    for (const Conflict& c : pointer_conflicts_) gather_pointer_conflict(c, op, b.mode);
    if (ordered)
      for (const Conflict& c : *ordered) gather_pointer_conflict(c, op, b.mode, true);
  }
}

void RankEngine::gather_pointer_conflict(const Conflict& c, const OpStamp& second, AccessMode second_role,
                                         bool ordered) {
  const Evidence e = judge(Side{c.first, c.first_role}, Side{second, second_role});
  if (e == Evidence::None) return;
  // The over-synchronisation pass counts a possible pair as one to keep ordered.
  if (ordered) return gather(op_ordered_, c, second_role);
  gather(e == Evidence::Race ? op_conflicts_ : op_possible_, c, second_role);
}

// A pointer-tier kernel meets the accesses of other tiers that cover the byte its argument
// points at (the last writer; the readers since, when it writes), and earlier pointer-tier
// accesses with the same pointer value; pointer_evidence.h says which pairs are races.
void RankEngine::touch_pointers(const OpStamp& op, const std::vector<PointerArg>& pointers, const VectorClock& now) {
  if (checking_order()) return;
  std::vector<Conflict>* ordered = tracing_sites() ? &ordered_scratch_ : nullptr;
  for (const PointerArg& p : pointers) {
    pointer_conflicts_.clear();
    if (ordered) ordered->clear();
    const uint64_t next = range_end(p.addr, 1);
    const bool may_write = writes(p.role);
    auto meet = [&](const OpStamp& prev, AccessMode role) {
      if (!prev.valid() || prev == op) return;
      if (!now.covers(prev.epoch)) pointer_conflicts_.push_back(Conflict{prev, role, p.addr, next});
      else if (ordered && now.rests_on_sites(prev.epoch)) ordered->push_back(Conflict{prev, role, p.addr, next});
    };
    shadow_.cells().visit(p.addr, next, [&](uint64_t, uint64_t, const ShadowCell& cell) {
      meet(cell.writer, AccessMode::Write);
      if (may_write)
        for (const OpStamp& reader : cell.readers) meet(reader, AccessMode::Read);
    });
    pointer_shadow_.access(p.addr, PointerUse{op, p.role}, now, pointer_conflicts_, ordered);
    for (const Conflict& c : pointer_conflicts_) gather_pointer_conflict(c, op, p.role);
    if (ordered)
      for (const Conflict& c : *ordered) gather_pointer_conflict(c, op, p.role, true);
  }
}

void RankEngine::report_conflicts(const OpStamp& op) {
  for (const OpConflict& oc : op_conflicts_) report(oc.c, op, oc.second_role);
  op_conflicts_.clear();
  for (const OpConflict& oc : op_possible_) report(oc.c, op, oc.second_role, true);
  op_possible_.clear();
  if (!op_ordered_.empty()) report_ordered(op);
}

void RankEngine::report_ordered(const OpStamp& op) {
  if (op_ordered_.empty()) return;
  // The clock the accesses were checked with: the operation's stream's (or the host's), which
  // nothing changes between the check and this report.
  const VectorClock& now = op.stream_slot == kHostSlot ? host_->clock : streams_[op.stream_slot].clock;
  for (const OpConflict& oc : op_ordered_) {
    sites_scratch_.clear();
    now.sites_needed_for(oc.c.first.epoch, sites_scratch_);
    if (!sites_scratch_.empty()) options_.on_ordered_by_sites(rank_, oc.c.first.seq, op.seq, oc.c.lo, sites_scratch_);
  }
  op_ordered_.clear();
}

}  // namespace streamhaz::analysis
