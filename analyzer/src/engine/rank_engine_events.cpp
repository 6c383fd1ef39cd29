// RankEngine, synchronisation: event records and waits, and the host's synchronisations and
// successful queries (docs/analysis.md, "Happens-before rules as implemented").
#include "engine/rank_engine.h"

namespace streamhaz::analysis {

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
  if (idle_query(r.seq, ev.clock)) return;
  host_joins(ev.clock);
}

void RankEngine::on(const trace::StreamSync& r) { host_joins(stream(r.stream).clock, site_of(r.seq)); }

void RankEngine::on(const trace::StreamQuery& r) {
  if (!r.complete) return;
  const VectorClock& c = stream(r.stream).clock;
  if (idle_query(r.seq, c)) return;
  host_joins(c);
}

bool RankEngine::idle_query(uint64_t seq, const VectorClock& observed) {
  if (!options_.on_idle_query && !options_.skip_idle_queries) return false;
  if (!host_->clock.covers_all(observed)) return false;
  if (options_.on_idle_query) options_.on_idle_query(rank_, seq);
  return options_.skip_idle_queries;
}

void RankEngine::on(const trace::DeviceSync& r) {
  const EdgeSites site = site_of(r.seq);
  for (const StreamState& s : streams_)
    if (s.device == r.device) host_joins(s.clock, site);
}

}  // namespace streamhaz::analysis
