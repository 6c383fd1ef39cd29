#include "sync/step_segments.h"

#include <algorithm>

namespace streamhaz::analysis {

void StepSegments::add(RecordFacts f, uint64_t index, bool boundary) {
  if (!last_ || boundary) last_ = &segments_.emplace_back(Segment{index});
  Segment& g = *last_;
  if (index - g.first_record > kMaxSpan) in_order_ = false;  // counts would wrap: read again
  const uint32_t offset = static_cast<uint32_t>(index - g.first_record);
  const uint64_t seq = f.seq;
  if (!seq && !g.has_call) {
    ++g.lead_records;
    g.lead_syncs += f.sync;
    return;
  }
  if (seq) {
    if (seq <= last_seq_) in_order_ = false;
    last_seq_ = std::max(last_seq_, seq);
    if (!g.has_call) {
      with_calls_.push_back(&g);
      g.has_call = true;
      g.first_call = offset;
      g.first_seq = seq;
    }
    g.last_call = offset;
    g.last_seq = seq;
  }
  ++g.records;
  g.syncs += f.sync;
}

void StepSegments::add_timing(uint64_t op_seq) {
  // The segment of the operation: the last with calls whose first call is at or below its seq
  // (calls in order, so the segments' seq ranges are too). GPU times come in bursts of
  // neighbouring operations: the segment of the last one, or the next, before a search.
  auto at_or_below = [&](size_t k) { return with_calls_[k]->first_seq <= op_seq; };
  auto is_last_at_or_below = [&](size_t k) {
    return k < with_calls_.size() && at_or_below(k) && (k + 1 == with_calls_.size() || !at_or_below(k + 1));
  };
  size_t k = timed_hint_;
  if (!is_last_at_or_below(k) && !is_last_at_or_below(++k)) {
    auto it = std::upper_bound(with_calls_.begin(), with_calls_.end(), op_seq,
                               [&](uint64_t seq, const Segment* g) { return seq < g->first_seq; });
    if (it == with_calls_.begin()) {
      in_order_ = false;  // no call of ours: let the second read count it
      return;
    }
    k = static_cast<size_t>(std::prev(it) - with_calls_.begin());
  }
  timed_hint_ = k;
  Segment& g = *with_calls_[k];
  if (op_seq > g.last_seq) in_order_ = false;  // no call of ours: let the second read count it
  else if (++g.timed == 0) in_order_ = false;  // wrapped: read again
}

bool StepSegments::shape(const std::vector<uint64_t>& starts, uint64_t end, TraceShape& t) const {
  if (!in_order_) return false;
  auto is_boundary = [&](uint64_t record) {
    auto it = std::lower_bound(segments_.begin(), segments_.end(), record,
                               [](const Segment& g, uint64_t r) { return g.first_record < r; });
    return it != segments_.end() && it->first_record == record;
  };
  if (!std::all_of(starts.begin(), starts.end(), is_boundary)) return false;
  if (end < t.records && !is_boundary(end)) return false;
  // add_to_step's sums, a segment at a time: its lead records go to the step in progress, its
  // calls open (or continue) the step of its first record, or belong to none from `end` on.
  std::vector<StepShape> steps;
  int current = -1;
  uint64_t timed_after_last = 0;
  for (const Segment& g : segments_) {
    const int step = g.first_record >= end ? -1
                     : static_cast<int>(std::upper_bound(starts.begin(), starts.end(), g.first_record) -
                                        starts.begin()) - 1;
    if (current >= 0) {
      steps[current].records += g.lead_records;
      steps[current].syncs += g.lead_syncs;
    }
    if (!g.has_call) continue;
    if (step >= 0 && step != current) {
      current = step;
      steps.resize(step + 1);
      steps[step].first_record = g.first_record + g.first_call;
    }
    if (current < 0) continue;
    StepShape& s = steps[current];
    s.records += g.records;
    s.syncs += g.syncs;
    if (step == current) {
      s.last_record = g.first_record + g.last_call;
      s.first_seq = std::min(s.first_seq, g.first_seq);
      s.last_seq = std::max(s.last_seq, g.last_seq);
      s.timed += g.timed;
    } else {
      timed_after_last += g.timed;  // past the steps: after the last one (count_timed's view)
    }
  }
  if (!steps.empty()) steps.back().timed_after += timed_after_last;
  t.steps = std::move(steps);
  return true;
}

}  // namespace streamhaz::analysis
