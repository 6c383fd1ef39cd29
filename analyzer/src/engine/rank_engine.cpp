// RankEngine: construction and the record loop. The happens-before rules of docs/analysis.md
// are its handlers, one per record kind, in the rank_engine_*.cpp files by topic. Where CUDA or
// NCCL does not guarantee an ordering, no edge is added: a missing edge shows up as a report,
// a wrong edge would hide a race.
#include "engine/rank_engine.h"

#include <algorithm>

namespace streamhaz::analysis {

RankEngine::RankEngine(int rank, uint32_t index, TimelineRegistry* shared_timelines, CollectiveMatcher& collectives,
                       FindingCollector& findings, const EngineOptions& options)
    : rank_(rank),
      index_(index),
      timelines_(shared_timelines ? *shared_timelines : own_timelines_),
      collectives_(collectives),
      findings_(findings),
      options_(options) {
  if (options.skip_syncs) skipped_syncs_ = RankSeqs(*options.skip_syncs, rank);
  if (options.phantom_ops) phantom_ops_ = RankSeqs(*options.phantom_ops, rank);
  if (options.lasting_phantom_ops) lasting_phantom_ops_ = RankSeqs(*options.lasting_phantom_ops, rank);
  if (options.sync_sites) sync_sites_ = RankSeqMap<SyncSiteIds>(*options.sync_sites, rank);
  shadow_.keep_all_readers(options.keep_all_readers);
  shadow_.expect_phantoms(options.phantom_ops != nullptr);
  pass_checks_ = options.order_checks || options.phantom_ops || options.on_ordered_by_sites;
  pointer_shadow_.keep_all(options.keep_all_readers);
  if (options.order_checks)  // this rank's pairs only (sorted by rank first)
    for (auto p = std::lower_bound(options.order_checks->begin(), options.order_checks->end(),
                                   std::tuple<int, uint64_t, uint64_t>{rank, 0, 0});
         p != options.order_checks->end() && std::get<0>(*p) == rank; ++p) {
      check_first_.try_emplace(std::get<1>(*p), Epoch{});
      check_second_[std::get<2>(*p)].push_back(std::get<1>(*p));
    }
  on(trace::HostThread{0});
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

void RankEngine::on(const trace::StringDef& r) {
  strings_[r.id] = r.text;
}

}  // namespace streamhaz::analysis
