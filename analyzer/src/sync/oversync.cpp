// The over-synchronisation pass (docs/sync-and-replay.md, "Verdicts"). Every wait and host
// synchronisation is dropped in turn and the race check is run again: a synchronisation
// protects what becomes unordered without it. Costs come from the replay.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "streamhaz/analysis/sync.h"
#include "sync/minimal_sync.h"
#include "sync/pair_check.h"
#include "sync/sync_sites.h"
#include "sync/sync_window.h"

namespace streamhaz::analysis {
namespace {

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min() / 4;

std::string us(int64_t ns) { return fmt::format("{:.1f} µs", static_cast<double>(ns) / 1000.0); }

std::string signed_pct(int64_t value, int64_t base) {
  if (base <= 0) return "n/a";
  return fmt::format("{:+.1f} %", 100.0 * static_cast<double>(value - base) / static_cast<double>(base));
}

// The stall a synchronisation caused in the captured run: how long it held up the next
// operation it orders. Waits: the waiting stream's idle time until the event completed (not
// counting time it waited for its own work or the host). Host synchronisations: how much
// later the next operation started than its GPU-side readiness and the call allowed, i.e.
// the GPU time lost to the blocked host (the host's own idle time costs nothing).
int64_t measured_stall(const SyncSite& site, const Schedule& m) {
  const auto& syncs = m.syncs[site.rank_index];
  auto st = syncs.find(site.seq);
  if (st == syncs.end() || !site.next_op) return 0;
  auto next = m.ops[site.rank_index].find(site.next_op);
  if (next == m.ops[site.rank_index].end()) return 0;
  if (!site.host) {
    if (st->second.done == kNoTime) return 0;
    return std::max<int64_t>(0, std::min(next->second.start, st->second.done) -
                                    std::max(st->second.stream_tail, next->second.issue));
  }
  return std::max<int64_t>(0, next->second.start - std::max(next->second.ready, st->second.issue));
}

bool in_windows(const std::vector<std::pair<int64_t, int64_t>>& windows, int64_t t) {
  return std::any_of(windows.begin(), windows.end(), [&](const auto& w) { return t >= w.first && t <= w.second; });
}

// Where stalls count, per rank: the measured steps; without a step range (the whole run is one
// "step"), the run from the rank's first collective on, so that set-up before training (NCCL's
// communicator init and its own synchronisations) is not charged to the steps.
std::vector<std::vector<std::pair<int64_t, int64_t>>> stall_windows(const std::vector<RankRecords>& run,
                                                                    const Schedule& m) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> windows = m.step_windows;
  if (m.measured_steps > 0) return windows;
  for (size_t ri = 0; ri < run.size() && ri < windows.size(); ++ri) {
    int64_t first = std::numeric_limits<int64_t>::max();
    for (const trace::Record& r : run[ri].records)
      if (const auto* c = std::get_if<trace::Nccl>(&r))
        if (auto it = m.ops[ri].find(c->op.seq); it != m.ops[ri].end()) first = std::min(first, it->second.start);
    for (auto& w : windows[ri])
      if (first != std::numeric_limits<int64_t>::max() && first > w.first) w.first = std::min(first, w.second);
  }
  return windows;
}

const char* verdict_text(SyncJudgement v) {
  switch (v) {
    case SyncJudgement::Redundant: return "orders no conflicting pair that nothing else orders";
    case SyncJudgement::Protects: return "orders conflicting pairs nothing else orders";
    case SyncJudgement::MayProtect:
      return "may order kernels without footprint (or work past the analysed window) that nothing else orders";
    case SyncJudgement::HostRead: return "the host's wait for a copy to host memory it may read";
  }
  return "";
}

struct Group {
  std::vector<const SyncSite*> sites;
  SyncJudgement verdict = SyncJudgement::Redundant;
  PairSet protected_pairs;
  uint64_t pairs = 0;
  std::set<std::pair<int, uint64_t>> unfootprinted;
};

}  // namespace

const char* to_string(SyncJudgement j) {
  switch (j) {
    case SyncJudgement::Redundant: return "redundant";
    case SyncJudgement::Protects: return "protects";
    case SyncJudgement::MayProtect: return "may-protect";
    case SyncJudgement::HostRead: return "host-read";
  }
  return "";
}

WhatIf minimal_sync(const std::vector<RankRecords>& run, std::vector<std::string>* advice) {
  const RunVariants v = make_variants(run, false);
  const VariantPairs base = variant_pairs(v, nullptr);
  WhatIf w;
  // Legacy-stream barriers are kept: they come with the stream an operation is issued on.
  for (const SyncSite& s : find_sync_sites(run))
    if (!s.host_read && s.kind != SyncKind::LegacyBarrier) w.drop.insert({s.rank, s.seq});
  std::map<std::tuple<int, uint64_t, uint64_t>, uint64_t> first_byte;
  PairSet need_real, need;
  new_variant_pairs(variant_pairs(v, &w, &first_byte), base, need_real, need);
  w.add = place_waits(run, need, w.drop);
  // The engine has the last word: pairs the small pass thought ordered get a wait of their own.
  for (int round = 0; round < 2; ++round) {
    PairSet left_real, left;
    new_variant_pairs(variant_pairs(v, &w), base, left_real, left);
    if (left.empty()) break;
    for (const auto& [rank, a, b] : left)
      if (a < b) w.add.push_back(AddedWait{rank, a, b});
    std::sort(w.add.begin(), w.add.end());
    w.add.erase(std::unique(w.add.begin(), w.add.end()), w.add.end());
  }
  if (advice) *advice = describe_waits(run, w.add, need, first_byte);
  w.lines.push_back("minimal-sync");
  return w;
}

SyncReport analyze_sync(const std::vector<std::string>& trace_files, const AnalysisOptions&,
                        const SyncOptions& opt, std::vector<Finding>* races) {
  SyncReport rep;
  bool cut = false;
  WindowBudget budget;
  budget.records = opt.window_records;
  budget.syncs = opt.window_syncs;
  budget.warmup_steps = opt.warmup_steps;
  budget.step_range = opt.replay.step_range;
  std::vector<JudgedWindow> judged;
  std::vector<RankRecords> run = load_judged_windows(trace_files, budget, judged, cut);
  rep.scope = describe_windows(judged, budget);
  const bool some_prefix = std::any_of(judged.begin(), judged.end(), [](const JudgedWindow& w) { return !w.from_steps; });
  if (cut && some_prefix)
    rep.warnings.push_back(fmt::format(
        "over-synchronisation: judged within the first {} records and {} synchronisations of each trace without "
        "steps (--sync-window, --sync-window-syncs; NVTX range '{}' not found: --step-range names it)",
        opt.window_records, opt.window_syncs, opt.replay.step_range));
  std::unique_ptr<Replayer> replay;
  try {
    replay = std::make_unique<Replayer>(run, opt.replay);
  } catch (const WhatIfError& e) {
    rep.warnings.push_back(std::string("over-synchronisation: no costs, so no findings: ") + e.what());
  }
  const RunVariants variants = make_variants(run, cut, &judged);
  const VariantPairs base = variant_pairs(variants, nullptr);
  // The synchronisations of the judged steps: those before them are kept for their edges only.
  std::vector<SyncSite> sites = find_sync_sites(run);
  std::erase_if(sites, [&](const SyncSite& s) { return s.seq < judged[s.rank_index].first_seq; });
  const trace::FootprintTier tier = weakest_tier(run);
  rep.ran = true;

  // Verdict of every instance.
  std::map<std::pair<std::string, SyncJudgement>, Group> groups;
  std::vector<std::pair<std::string, SyncJudgement>> order;
  // Group testing: dropping a set of synchronisations that orders nothing new (in any variant)
  // clears every member at once, since dropping fewer removes fewer edges; a set that does
  // orders something is split until single synchronisations are judged.
  std::vector<SyncJudgement> verdicts(sites.size(), SyncJudgement::Redundant);
  std::vector<PairSet> protected_by(sites.size());
  std::vector<uint64_t> real_count(sites.size(), 0);
  std::vector<size_t> candidates;
  for (size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].host && sites[i].host_read) verdicts[i] = SyncJudgement::HostRead;
    else candidates.push_back(i);
  }
  std::function<void(size_t, size_t)> judge = [&](size_t lo, size_t hi) {
    if (lo >= hi) return;
    WhatIf w;
    for (size_t k = lo; k < hi; ++k) w.drop.insert({sites[candidates[k]].rank, sites[candidates[k]].seq});
    // Pairs with known footprints first: a set that orders some is split without the rest.
    PairSet real = new_pairs(unordered_pairs(variants.real, nullptr, &w.drop), base.real);
    if (!real.empty() && hi - lo > 1) {
      judge(lo, lo + (hi - lo) / 2);
      judge(lo + (hi - lo) / 2, hi);
      return;
    }
    PairSet all = real;
    // A set that orders something is split, so the first variant that shows it is enough; a
    // single synchronisation gets every pair it orders (the minimal waits replace them all).
    add_new_touch_pairs(variants, base, w.drop, all, hi - lo > 1);
    if (all.empty()) {
      for (size_t k = lo; k < hi; ++k) verdicts[candidates[k]] = SyncJudgement::Redundant;
      return;
    }
    if (hi - lo == 1) {
      const size_t i = candidates[lo];
      verdicts[i] = !real.empty() ? SyncJudgement::Protects : SyncJudgement::MayProtect;
      real_count[i] = real.size();
      protected_by[i] = std::move(all);
      return;
    }
    judge(lo, lo + (hi - lo) / 2);
    judge(lo + (hi - lo) / 2, hi);
  };
  judge(0, candidates.size());

  for (size_t i = 0; i < sites.size(); ++i) {
    const SyncSite& s = sites[i];
    const SyncJudgement verdict = verdicts[i];
    const auto gk = std::make_pair(s.key, verdict);
    auto [it, fresh] = groups.try_emplace(gk);
    if (fresh) order.push_back(gk);
    Group& g = it->second;
    g.verdict = verdict;
    g.sites.push_back(&s);
    g.pairs += real_count[i];
    for (const auto& [rank, a, b] : protected_by[i]) {
      for (uint64_t seq : {a, b})
        if (variants.unfootprinted.count({rank, seq})) g.unfootprinted.insert({rank, seq});
    }
    g.protected_pairs.insert(protected_by[i].begin(), protected_by[i].end());
  }

  // Costs.
  Schedule base_schedule;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> windows;
  if (replay) {
    base_schedule = replay->run_unchanged();
    const Schedule& m = replay->measured();
    rep.step_ns = m.step_ns;
    windows = stall_windows(run, m);
  }
  for (const auto& gk : order) {
    Group& g = groups[gk];
    const SyncSite& first = *g.sites.front();
    SyncVerdict v;
    v.key = gk.first;
    v.what = first.what;
    v.where = first.where;
    v.verdict = g.verdict;
    v.instances = g.sites.size();
    v.pairs = g.pairs;
    v.unfootprinted = g.unfootprinted.size();
    std::set<int> ranks;
    for (const SyncSite* s : g.sites) ranks.insert(s->rank);
    if (replay) {
      const Schedule& m = replay->measured();
      std::vector<int64_t> per_rank(run.size(), 0);
      for (const SyncSite* s : g.sites) {
        const int64_t stall = measured_stall(*s, m);
        auto next = m.ops[s->rank_index].find(s->next_op);
        const int64_t when = next != m.ops[s->rank_index].end() ? next->second.start : 0;
        if (in_windows(windows[s->rank_index], when)) per_rank[s->rank_index] += stall;
      }
      for (size_t ri = 0; ri < run.size(); ++ri) {
        const size_t steps = std::max<size_t>(1, m.step_windows[ri].size());
        v.stall_ns_per_step = std::max(v.stall_ns_per_step, per_rank[ri] / static_cast<int64_t>(steps));
      }
      v.step_ns = base_schedule.step_ns;
      WhatIf w;
      for (const SyncSite* s : g.sites) w.drop.insert({s->rank, s->seq});
      if (g.verdict == SyncJudgement::Redundant) {
        v.step_without_ns = replay->run(apply_edits(run, w), {}, &w.drop).step_ns;
        v.finding = v.stall_ns_per_step >= static_cast<int64_t>(opt.min_cost * static_cast<double>(v.step_ns));
      } else if (g.verdict == SyncJudgement::Protects || g.verdict == SyncJudgement::MayProtect) {
        // Stronger than needed? Replace it by the minimal waits for what it protects.
        w.add = place_waits(run, g.protected_pairs, w.drop);
        PairSet left_real, left;
        new_variant_pairs(variant_pairs(variants, &w), base, left_real, left);
        const bool sound = left.empty();
        if (sound) {
          v.replaced = true;
          v.step_without_ns = replay->run(apply_edits(run, w), {}, &w.drop).step_ns;
          v.finding = v.step_ns - v.step_without_ns >=
                      static_cast<int64_t>(opt.min_cost * static_cast<double>(v.step_ns));
        }
      }
    }
    if (v.finding) {
      Finding f;
      f.kind = FindingKind::OverSync;
      const bool stronger = g.verdict != SyncJudgement::Redundant;
      const bool barrier = first.kind == SyncKind::LegacyBarrier;
      f.key = v.key + (stronger ? "|stronger than needed" : "|redundant");
      f.title = stronger ? fmt::format("{} is stronger than needed", v.what)
                         : fmt::format("{} protects nothing", v.what);
      f.first = first.prev_ref;
      f.second = first.next_ref;
      f.sync_rank = first.rank;  // the call judged, for its stack (attach_stacks)
      f.sync_seq = first.seq;
      if (replay) {
        const Schedule& m = replay->measured();
        for (OpRef* op : {&f.first, &f.second}) {
          auto it = m.ops[first.rank_index].find(op->seq);
          if (op->seq && it != m.ops[first.rank_index].end()) {
            op->start_ns = static_cast<uint64_t>(std::max<int64_t>(0, it->second.start));
            op->end_ns = static_cast<uint64_t>(std::max<int64_t>(0, it->second.end));
          }
        }
      }
      f.first.role = f.second.role = trace::AccessMode::Read;
      if (stronger) {
        WhatIf w;
        for (const SyncSite* s : g.sites) w.drop.insert({s->rank, s->seq});
        w.add = place_waits(run, g.protected_pairs, w.drop);
        std::map<std::tuple<int, uint64_t, uint64_t>, uint64_t> first_byte;
        WhatIf dropped;
        dropped.drop = w.drop;
        variant_pairs(variants, &dropped, &first_byte);
        std::string lines;
        for (const std::string& l : describe_waits(run, w.add, g.protected_pairs, first_byte))
          lines += (lines.empty() ? "" : "; ") + l;
        f.missing_order = (barrier ? "issue it on a non-blocking stream (in the same order) and order what it "
                                     "protects with event waits: "
                                   : "replace it by event waits: ") +
                          lines;
      } else if (barrier) {
        f.missing_order = "issue it on a non-blocking stream (in the same order): the rest of the synchronisation orders "
                          "the same pairs";
      } else {
        f.missing_order = fmt::format("remove it: {} orders the same pairs", "the rest of the synchronisation");
      }
      f.occurrences = v.instances;
      f.ranks.assign(ranks.begin(), ranks.end());
      f.tier = tier;
      f.exact = true;
      f.detail = fmt::format(
          "{} {}; {}; stalled {} per step in the captured run ({:.1f} % of the {} step); the replay predicts a step "
          "of {} {} ({}); verdict on {}-tier footprints{}",
          v.what, v.where, verdict_text(g.verdict), us(v.stall_ns_per_step),
          v.step_ns ? 100.0 * static_cast<double>(v.stall_ns_per_step) / static_cast<double>(v.step_ns) : 0.0,
          us(v.step_ns), us(v.step_without_ns), stronger ? "with the minimal waits instead" : "without it",
          signed_pct(v.step_without_ns, v.step_ns), trace::to_string(tier),
          variants.unfootprinted.empty()
              ? ""
              : fmt::format(", kernels without footprint taken to touch all memory ({} of them ordered by it)",
                            v.unfootprinted));
      rep.findings.push_back(std::move(f));
    } else {
      std::string cost;
      if (replay && v.step_without_ns)
        cost = fmt::format("; stall {} per step, step {} {} ({})", us(v.stall_ns_per_step), v.replaced ? "with minimal waits" : "without it",
                           us(v.step_without_ns), signed_pct(v.step_without_ns, v.step_ns));
      else if (replay)
        cost = fmt::format("; stall {} per step", us(v.stall_ns_per_step));
      std::string extra;
      if (g.verdict == SyncJudgement::MayProtect) extra = fmt::format(" ({} kernel(s) without footprint)", v.unfootprinted);
      if (g.verdict == SyncJudgement::Protects) extra = fmt::format(" ({} pair(s))", v.pairs);
      rep.notes.push_back(fmt::format("{} {} [{}x, {}{}]: {}{}{}", v.what, v.where, v.instances,
                                      ranks.size() == 1 ? "rank " : "ranks ",
                                      fmt::format("{}", fmt::join(ranks, ", ")), verdict_text(g.verdict), extra, cost));
    }
    rep.verdicts.push_back(std::move(v));
  }

  // The minimal synchronisation of the whole run.
  rep.minimal = minimal_sync(run, &rep.advice);
  if (replay) rep.minimal_step_ns = replay->run(apply_edits(run, rep.minimal)).step_ns;

  // Manifestation: the slowdown of the earlier operation's stream under which a race's later
  // operation starts before the earlier one ends in the replay.
  if (races && replay) {
    for (Finding& f : *races) {
      if (f.kind != FindingKind::Race || f.second.on_host || f.first.on_host) continue;
      size_t ri = run.size();
      for (size_t i = 0; i < run.size(); ++i)
        if (run[i].rank == f.first.rank) ri = i;
      if (ri == run.size()) continue;
      auto overlap = [&](double factor) {
        const Schedule s = factor == 1.0 ? base_schedule
                                         : replay->run(run, {DurationScale{f.first.stream_name, "", factor}});
        auto a = s.ops[ri].find(f.first.seq), b = s.ops[ri].find(f.second.seq);
        if (a == s.ops[ri].end() || b == s.ops[ri].end()) return false;
        // The later operation starts before the earlier one has ended: they overlap, or run
        // the other way round; either way the bytes are no longer accessed in issue order.
        return b->second.start < a->second.end;
      };
      std::string text;
      if (overlap(1.0)) {
        text = "in the replay of the captured run the later operation already starts before the earlier one ends";
      } else if (!overlap(64.0)) {
        text = fmt::format("the replay keeps the two operations in issue order even with {} 64x slower",
                           f.first.stream_name);
      } else {
        double lo = 1.0, hi = 64.0;
        for (int i = 0; i < 20 && hi - lo > 0.005; ++i) {
          const double mid = (lo + hi) / 2;
          (overlap(mid) ? hi : lo) = mid;
        }
        text = fmt::format("manifests once {} runs {:.2f}x slower (replay: the later operation then starts before "
                           "the earlier one ends)",
                           f.first.stream_name, hi);
      }
      f.detail = f.detail.empty() ? text : f.detail + "; " + text;
    }
  }
  return rep;
}

}  // namespace streamhaz::analysis
