#include "sync/sync_cost.h"

#include <algorithm>
#include <limits>

#include "sync/minimal_sync.h"

namespace streamhaz::analysis {
namespace {

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min() / 4;

// The stall a synchronisation caused in the captured run: how long it held up the next
// operation it orders. Waits: the waiting stream's idle time until the event completed (not
// counting time it waited for its own work or the host). Host synchronisations: how much
// later the next operation started than its GPU-side readiness and the call allowed, i.e.
// the GPU time lost to the blocked host (the host's own idle time costs nothing).
int64_t measured_stall(const SyncSite& site, const Schedule& m) {
  const SyncTime* st = m.syncs[site.rank_index].find(site.seq);
  if (!st || !site.next_op) return 0;
  const OpTime* next = m.ops[site.rank_index].find(site.next_op);
  if (!next) return 0;
  if (!site.host) {
    if (st->done == kNoTime) return 0;
    return std::max<int64_t>(0, std::min(next->start, st->done) - std::max(st->stream_tail, next->issue));
  }
  return std::max<int64_t>(0, next->start - std::max(next->ready, st->issue));
}

bool in_windows(const std::vector<std::pair<int64_t, int64_t>>& windows, int64_t t) {
  return std::any_of(windows.begin(), windows.end(), [&](const auto& w) { return t >= w.first && t <= w.second; });
}

}  // namespace

// Where stalls count, per rank: the measured steps; without a step range (the whole run is one
// "step"), the run from the rank's first collective on, so that set-up before training (NCCL's
// communicator init and its own synchronisations) is not charged to the steps.
StallWindows stall_windows(const std::vector<RankRecords>& run, const Schedule& m) {
  StallWindows windows = m.step_windows;
  if (m.measured_steps > 0) return windows;
  for (size_t ri = 0; ri < run.size() && ri < windows.size(); ++ri) {
    int64_t first = std::numeric_limits<int64_t>::max();
    for (const trace::Record& r : run[ri].records)
      if (const auto* c = std::get_if<trace::Nccl>(&r))
        if (const OpTime* t = m.ops[ri].find(c->op.seq)) first = std::min(first, t->start);
    for (auto& w : windows[ri])
      if (first != std::numeric_limits<int64_t>::max() && first > w.first) w.first = std::min(first, w.second);
  }
  return windows;
}

void cost_site(const SiteGroup& g, const SiteCostContext& c, SyncVerdict& v) {
  const Schedule& m = c.replay.measured();
  std::vector<int64_t> per_rank(c.run.size(), 0);
  for (const SyncSite* s : g.sites) {
    const int64_t stall = measured_stall(*s, m);
    const OpTime* next = m.ops[s->rank_index].find(s->next_op);
    const int64_t when = next ? next->start : 0;
    if (in_windows(c.windows[s->rank_index], when)) per_rank[s->rank_index] += stall;
  }
  for (size_t ri = 0; ri < c.run.size(); ++ri) {
    const size_t steps = std::max<size_t>(1, m.step_windows[ri].size());
    v.stall_ns_per_step = std::max(v.stall_ns_per_step, per_rank[ri] / static_cast<int64_t>(steps));
  }
  v.step_ns = c.unchanged.step_ns;
  const int64_t min_gain = static_cast<int64_t>(c.min_cost * static_cast<double>(v.step_ns));
  const CostRun& s = c.sample;
  // The replayed change of a step, on the sample, applied to the judged steps' replayed step.
  auto predicted = [&](const WhatIf& w) {
    const int64_t edited = s.replay->run_in_place(*s.run, w, &s.variants->places).step_ns;  // no edited copy of the sample
    return std::max<int64_t>(1, v.step_ns + edited - s.unchanged->step_ns);
  };
  WhatIf w;
  w.drop = g.instances();
  if (g.verdict == SyncJudgement::Redundant) {
    v.step_without_ns = predicted(w);
    v.finding = v.stall_ns_per_step >= min_gain;
  } else if (g.verdict == SyncJudgement::Protects || g.verdict == SyncJudgement::MayProtect) {
    // Stronger than needed? Replace it by the minimal waits for what it protects, and propose
    // that only where the check finds every pair still ordered.
    // Removing the site can only unorder the pairs it protects, and added waits only add order:
    // those pairs are all the check needs to look at.
    const PairSet pairs = s.sampled ? s.ops->filter(g.protected_pairs) : g.protected_pairs;
    w.add = place_waits(*s.run, pairs, w.drop);
    if (!unordered_after(*s.variants, w, pairs).empty()) return;
    const int64_t with_waits = predicted(w);
    const bool gains = v.step_ns - with_waits >= min_gain;
    // A finding proposes the waits for the whole window: they must order every pair of it.
    if (gains && s.sampled) {
      WhatIf whole;
      whole.drop = w.drop;
      whole.add = place_waits(c.run, g.protected_pairs, w.drop);
      if (!unordered_after(c.variants, whole, g.protected_pairs).empty()) return;
    }
    v.replaced = true;
    v.step_without_ns = with_waits;
    v.finding = gains;
  }
}

}  // namespace streamhaz::analysis
