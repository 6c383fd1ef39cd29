#include "sync/cost_sample.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "replay/steps.h"
#include "sync/sync_window.h"

namespace streamhaz::analysis {

std::vector<RankRecords> sample_steps(const std::vector<RankRecords>& run, const std::string& step_range, int steps) {
  // Where each rank's step `steps` + 1 begins: its first operation.
  std::vector<size_t> cut_at;
  for (const RankRecords& rr : run) {
    const std::vector<std::vector<uint64_t>> found = steps_of(rr, step_range);
    if (found.size() <= static_cast<size_t>(steps) || found[steps].empty()) return {};
    const uint64_t first = found[steps].front();
    const auto at = std::find_if(rr.records.begin(), rr.records.end(), [&](const trace::Record& r) {
      const trace::OpCommon* op = trace::op_common(r);
      return op && op->seq == first;
    });
    cut_at.push_back(static_cast<size_t>(at - rr.records.begin()));
  }
  std::vector<RankRecords> out;
  for (size_t ri = 0; ri < run.size(); ++ri) {
    const RankRecords& in = run[ri];
    RankRecords& rr = out.emplace_back();
    rr.rank = in.rank;
    rr.path = in.path;
    rr.truncated = in.truncated;
    rr.records.assign(in.records.begin(), in.records.begin() + static_cast<std::ptrdiff_t>(cut_at[ri]));
    std::unordered_set<uint64_t> kept;
    for (const trace::Record& r : rr.records)
      if (const trace::OpCommon* op = trace::op_common(r)) kept.insert(op->seq);
    // GPU times come late: those of kept operations may follow the cut.
    for (size_t i = cut_at[ri]; i < in.records.size(); ++i)
      if (const auto* t = std::get_if<trace::Timing>(&in.records[i]); t && kept.count(t->op_seq))
        rr.records.push_back(in.records[i]);
    for (uint64_t start : in.pattern_step_starts)
      if (start < cut_at[ri]) rr.pattern_step_starts.push_back(start);
    if (!rr.pattern_step_starts.empty()) {
      rr.pattern_steps_end = cut_at[ri];
      rr.pattern_period = in.pattern_period;
    }
  }
  return out;
}

CostSample::CostSample(const CostRun& window, const std::string& step_range, const ReplayOptions& options,
                       const std::vector<JudgedWindow>* judged)
    : use_(window) {
  run_ = sample_steps(*window.run, step_range, kCostSampleSteps);
  if (run_.empty()) return;
  try {
    replay_ = std::make_unique<Replayer>(&run_, options);
  } catch (const WhatIfError&) {
    return;  // no GPU times in the sample's steps: the window's replay serves
  }
  unchanged_ = replay_->run_unchanged();
  // The work after the sample stands as end fences, as the window's own cut does.
  const RunVariants& whole = *window.variants;
  variants_ = make_variants(run_, true, judged,
                            whole.idle_queries_found ? IdleQueries::ByWitnessCheck : IdleQueries::Find, whole.jobs);
  ops_ = OpsWithin(run_, variants_);
  if (!variants_.idle_queries_found) {
    // Each rank's sample is a prefix of its window, and whether a query is idle depends on its
    // rank's records before it alone (the pass's checks keep each rank's own order): the window's.
    for (const RankRecords& rr : run_)
      for (const trace::Record& r : rr.records) {
        const auto* e = std::get_if<trace::EventQuery>(&r);
        const auto* s = std::get_if<trace::StreamQuery>(&r);
        const uint64_t seq = e ? e->seq : s ? s->seq : 0;
        if (seq && whole.idle_queries.count({rr.rank, seq})) variants_.idle_queries.insert({rr.rank, seq});
      }
    variants_.idle_queries_found = true;
  }
  use_ = CostRun{&run_, replay_.get(), &unchanged_, &variants_, true, kCostSampleSteps, &ops_};
}

OpsWithin::OpsWithin(const std::vector<RankRecords>& run, const RunVariants& variants) {
  std::map<int, uint64_t> lowest;  // per rank: its lowest operation seq
  for (const RankRecords& rr : run)
    for (const trace::Record& r : rr.records)
      if (const trace::OpCommon* op = trace::op_common(r)) {
        ops_.emplace_back(rr.rank, op->seq);
        auto [it, fresh] = lowest.try_emplace(rr.rank, op->seq);
        if (!fresh) it->second = std::min(it->second, op->seq);
      }
  // Start fences (the work before the window) count; end fences stand for work after the run
  // given, whose seqs another run's operations may have.
  for (const auto& [rank, seq] : variants.fences)
    if (auto it = lowest.find(rank); it != lowest.end() && seq < it->second) ops_.emplace_back(rank, seq);
  std::sort(ops_.begin(), ops_.end());
  ops_.erase(std::unique(ops_.begin(), ops_.end()), ops_.end());
}

PairSet OpsWithin::filter(const PairSet& pairs) const {
  auto holds = [&](int rank, uint64_t seq) { return std::binary_search(ops_.begin(), ops_.end(), std::pair{rank, seq}); };
  std::vector<Pair> out;
  for (const auto& p : pairs) {
    const auto& [rank, a, b] = p;
    if (holds(rank, a) && holds(rank, b)) out.push_back(p);
  }
  return PairSet(std::move(out));
}

}  // namespace streamhaz::analysis
