// RankEngine, streams and the host: stream slots, the point in stream order where a command
// takes effect (host and legacy-stream edges), host timelines and what the host learns.
#include "engine/rank_engine.h"

namespace streamhaz::analysis {

uint32_t RankEngine::new_slot(trace::StreamId id, uint32_t device, uint32_t flags, bool by_id) {
  StreamState s;
  s.id = id;
  s.timeline = timelines_.add();
  s.device = device;
  s.flags = flags;
  streams_.push_back(std::move(s));
  blocking_slots_stale_ = true;
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
  return new_slot(id, 0, uncreated_stream_flags(id), true);
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
  const SyncSiteIds* ids = sync_sites_.find(seq);
  return ids ? EdgeSites{ids->site, ids->group} : EdgeSites{};
}

bool RankEngine::barrier_skipped() const {
  if (!options_.skip_syncs || replaying_ || !current_) return false;
  const trace::OpCommon* op = trace::op_common(*current_);
  return op && skipped_syncs_.contains(op->seq);
}

const std::vector<uint32_t>& RankEngine::blocking_slots() {
  if (blocking_slots_stale_) {
    blocking_slots_.clear();
    for (uint32_t i = 0; i < streams_.size(); ++i)
      if (streams_[i].blocking()) blocking_slots_.push_back(i);
    blocking_slots_stale_ = false;
  }
  return blocking_slots_;
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
    for (const uint32_t b : blocking_slots())
      if (streams_[b].device == s.device) s.clock.join_via(streams_[b].clock, barrier_site);
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
    for (const uint32_t b : blocking_slots())
      if (streams_[b].device == s.device) streams_[b].legacy_pending.join_via(s.clock, barrier_site);
  return e;
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
    blocking_slots_stale_ = true;
    return;
  }
  new_slot(r.stream, r.device, r.flags, true);
}

void RankEngine::on(const trace::StreamName& r) { stream(r.stream).name = r.name; }

void RankEngine::on(const trace::EventCreate& r) { event(r.event); }

}  // namespace streamhaz::analysis
