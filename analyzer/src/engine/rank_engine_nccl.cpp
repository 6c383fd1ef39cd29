// RankEngine, NCCL: an operation on its stream, and for a collective the cross-rank order it
// receives (posted to the matcher, waited for, or taken ahead of the other ranks).
#include "engine/rank_engine.h"

namespace streamhaz::analysis {

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

}  // namespace streamhaz::analysis
