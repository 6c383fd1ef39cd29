// The over-synchronisation pass (docs/sync-and-replay.md, "Verdicts"): what each synchronisation
// site protects (site_protection.h), what it costs (sync_cost.h), how it reads
// (oversync_report.h), the minimal synchronisation of the run and race manifestation.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "sync/oversync.h"
#include "sync/cost_sample.h"
#include "sync/in_parallel.h"
#include "sync/manifestation.h"
#include "sync/minimal_sync.h"
#include "sync/oversync_report.h"
#include "sync/pair_check.h"
#include "sync/site_group.h"
#include "sync/site_protection.h"
#include "sync/sync_cost.h"
#include "sync/sync_sites.h"
#include "sync/sync_window.h"
#include "sync/untimed_window.h"

namespace streamhaz::analysis {
namespace {

// One group per site key, in the order of first instances, with the verdict of the site.
std::vector<SiteGroup> group_sites(const SyncSites& sites, const SiteIds& ids, const Protection& p,
                                   bool others_order_pairs) {
  std::map<std::string, size_t> index;
  std::vector<SiteGroup> groups;
  for (const SyncSite& s : sites) {
    auto [it, fresh] = index.try_emplace(s.key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].sites.push_back(&s);
  }
  std::map<std::string, SiteId> id_of;
  for (size_t i = 0; i < ids.keys.size(); ++i) id_of[ids.keys[i]] = static_cast<SiteId>(i + 1);
  for (SiteGroup& g : groups) {
    auto id = id_of.find(g.first().key);
    if (id == id_of.end()) {  // an instance waits for a copy to host memory the host may read
      g.verdict = SyncJudgement::HostRead;
      continue;
    }
    const SiteProtection& sp = p.sites[id->second - 1];
    g.verdict = !sp.real.empty()  ? SyncJudgement::Protects
                : !sp.all.empty() ? SyncJudgement::MayProtect
                : others_order_pairs ? SyncJudgement::MayProtect
                                     : SyncJudgement::Redundant;
    g.pairs = sp.real.size();
    g.protected_pairs = sp.all;
    g.unfootprinted = sp.unfootprinted;
  }
  return groups;
}

// Pairs with a fence on either side stand for work outside the judged window: the minimal
// synchronisation places no wait for them.
PairSet without_fences(const PairSet& pairs, const RunVariants& v) {
  std::vector<Pair> out;
  for (const auto& p : pairs) {
    const auto& [rank, a, b] = p;
    if (!v.fences.count({rank, a}) && !v.fences.count({rank, b})) out.push_back(p);
  }
  return PairSet(std::move(out));
}

// The minimal synchronisation of a judged run: event waits in place of every replaceable site,
// for what those sites together protect (Protection::replaceable, from the same checks as the
// verdicts), placed by place_waits and held to the race check, which has the last word: pairs
// the small pass thought ordered get a wait of their own.
WhatIf minimal_of(const std::vector<RankRecords>& run, const RunVariants& v, const SiteIds& ids, const Protection& p,
                  std::vector<std::string>* advice) {
  WhatIf w;
  for (const auto& [instance, site] : ids.instances)
    if (site.group) w.drop.insert(instance);
  const PairSet need = without_fences(p.replaceable.all, v);
  w.add = place_waits(run, need, w.drop, v.jobs);
  for (int round = 0; round < 2; ++round) {
    const PairSet left = unordered_after(v, w, need);
    if (left.empty()) break;
    for (const auto& [rank, a, b] : left)
      if (a < b) w.add.push_back(AddedWait{rank, a, b});
    std::sort(w.add.begin(), w.add.end());
    w.add.erase(std::unique(w.add.begin(), w.add.end()), w.add.end());
  }
  if (advice) *advice = describe_waits(run, w.add, need, p.first_byte, &v.places, v.jobs);
  w.lines.push_back("minimal-sync");
  return w;
}

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

const char* to_string(SyncAlgorithm a) {
  switch (a) {
    case SyncAlgorithm::Witness: return "witness";
    case SyncAlgorithm::Removal: return "removal";
  }
  return "";
}

WhatIf minimal_sync(const std::vector<RankRecords>& run, std::vector<std::string>* advice) {
  RunVariants v = make_variants(run, false, nullptr, IdleQueries::ByWitnessCheck);
  const SiteIds ids = judged_sites(find_sync_sites(run));
  return minimal_of(run, v, ids, protection_by_witness(v, ids), advice);
}

SyncReport analyze_sync(const std::vector<std::string>& trace_files, const AnalysisOptions& options,
                        const SyncOptions& opt, std::vector<Finding>* races) {
  return analyze_sync(trace_files, options, opt, races, nullptr);
}

SyncReport analyze_sync(const std::vector<std::string>& trace_files, const AnalysisOptions& options, const SyncOptions& opt,
                        std::vector<Finding>* races, const std::vector<TraceShape>* shapes) {
  SyncReport rep;
  WindowBudget budget;
  budget.records = opt.window_records;
  budget.syncs = opt.window_syncs;
  budget.warmup_steps = opt.warmup_steps;
  budget.step_range = opt.replay.step_range;
  budget.jobs = options.jobs;
  std::vector<JudgedWindow> judged;
  std::vector<RankRecords> run = load_judged_windows(trace_files, budget, judged, shapes);
  rep.scope = describe_windows(judged, budget);
  // Only a trace judged from its start says so when its budget cut it (a launcher's trace without
  // operations has no steps, and is not cut).
  const bool prefix_cut =
      std::any_of(judged.begin(), judged.end(), [](const JudgedWindow& w) { return !w.from_steps && w.cut; });
  if (prefix_cut)
    rep.warnings.push_back(fmt::format(
        "over-synchronisation: judged within the first {} records and {} synchronisations of each trace without "
        "steps (--sync-window, --sync-window-syncs; NVTX range '{}' not found: --step-range names it)",
        opt.window_records, opt.window_syncs, opt.replay.step_range));
  std::unique_ptr<Replayer> replay;
  ReplayOptions measure = opt.replay;
  measure.first_step_warmup = false;  // the judged steps come after the warm-up
  try {
    replay = std::make_unique<Replayer>(&run, measure);
  } catch (const WhatIfError& e) {
    // Where the tracer ended GPU times by steps of its own counting, it says which: the reason
    // that helps (its generic advice, `--gpu-times all`, would cost the whole run).
    const std::string reason = untimed_window_reason(run, judged);
    rep.warnings.push_back("over-synchronisation: no costs, so no findings: " +
                           (reason.empty() ? std::string(e.what()) : "the judged steps hold no GPU times: " + reason));
  }
  const bool by_witness = opt.algorithm == SyncAlgorithm::Witness;
  RunVariants variants =
      make_variants(run, any_window_cut(judged), &judged, by_witness ? IdleQueries::ByWitnessCheck : IdleQueries::Find, options.jobs);
  // The synchronisations of the judged steps: those before them are kept for their edges only.
  std::vector<uint64_t> judged_from;
  for (const JudgedWindow& w : judged) judged_from.push_back(w.first_seq);
  const SyncSites sites = find_sync_sites(run, &judged_from, options.jobs);
  const SiteIds ids = judged_sites(sites);
  const Protection protection = by_witness ? protection_by_witness(variants, ids) : protection_by_removal(variants, ids);
  // Pairs only other ranks order: some rank's synchronisation may be what orders them, so that
  // no synchronisation is called redundant (docs/sync-and-replay.md, "Ranks").
  const PairSet through_others = ordered_only_through_other_ranks(variants, protection.base);
  if (!through_others.empty()) {
    const auto& [rank, a, b] = *through_others.begin();
    rep.warnings.push_back(fmt::format(
        "over-synchronisation: {} conflicting pair(s) are ordered only through other ranks (first: rank {}, seq {} "
        "and {}); a synchronisation of any rank may be what orders them, so none is called redundant",
        through_others.size(), rank, a, b));
  }
  std::vector<SiteGroup> groups = group_sites(sites, ids, protection, !through_others.empty());
  const trace::FootprintTier tier = weakest_tier(run);
  rep.ran = true;

  Schedule unchanged;
  StallWindows windows;
  std::unique_ptr<CostSample> sample;
  CostRun window_run;
  if (replay) {
    unchanged = replay->run_unchanged();
    window_run = CostRun{&run, replay.get(), &unchanged, &variants};
    sample = std::make_unique<CostSample>(window_run, opt.replay.step_range, measure, &judged);
    rep.step_ns = replay->measured().step_ns;
    if (const std::string steps = describe_step_times(replay->measured(), run); !steps.empty())
      rep.scope += (rep.scope.empty() ? "" : "; measured ") + steps;
    if (sample->get().sampled)
      rep.scope += fmt::format("; changes replayed on the first {} judged steps", sample->get().steps);
    windows = stall_windows(run, replay->measured());
  }
  const OversyncReportContext report_context{run, replay ? &replay->measured() : nullptr, tier,
                                             variants.unfootprinted.size(), protection.first_byte,
                                             &variants.places};
  // Each site's cost is replayed apart from the others' (on `--jobs` threads), then reported in order.
  std::vector<SyncVerdict> verdicts(groups.size());
  for_each_index(replay ? groups.size() : 0, options.jobs, [&](size_t i) {
    cost_site(groups[i], SiteCostContext{run, *replay, unchanged, windows, variants, sample->get(), opt.min_cost},
              verdicts[i]);
  });
  for (size_t i = 0; i < groups.size(); ++i) {
    const SiteGroup& g = groups[i];
    const SyncSite& first = g.first();
    SyncVerdict& v = verdicts[i];
    v.key = first.key;
    v.what = first.text->what;
    v.where = first.text->where;
    v.verdict = g.verdict;
    v.instances = g.sites.size();
    v.pairs = g.pairs;
    v.unfootprinted = g.unfootprinted.size();
    if (v.finding) rep.findings.push_back(oversync_finding(g, v, report_context));
    else rep.notes.push_back(oversync_note(g, v, bool(replay)));
    rep.verdicts.push_back(std::move(v));
  }

  // Its predicted step time is `replay --what-if @FILE`'s (check --minimal-sync FILE), not a
  // replay of every judged step here that no output shows.
  rep.minimal = minimal_of(run, variants, ids, protection, &rep.advice);
  if (races && replay) add_manifestation(*races, {&sample->get(), &window_run});
  return rep;
}

}  // namespace streamhaz::analysis
