#include "sync/pair_check.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/rank_schedule.h"
#include "streamhaz/analysis/replay.h"
#include "sync/by_rank.h"
#include "sync/sync_window.h"

namespace streamhaz::analysis {

RunVariants make_variants(const std::vector<RankRecords>& run, bool fences, const std::vector<JudgedWindow>* windows,
                          IdleQueries idle_queries, unsigned jobs) {
  RunVariants v;
  v.real_ = &run;
  v.jobs = jobs;
  v.places = RecordPlaces(run);
  // The run with phantoms is read in place (AnalysisOptions::phantoms): here its fences, then one
  // reading of it names the phantoms.
  std::vector<PhantomFences>& plan = v.touch.emplace_back(run.size());
  for (size_t ri = 0; ri < run.size(); ++ri) {
    const RankRecords& in = run[ri];
    PhantomFences& out = plan[ri];
    auto fence = [&](size_t before, trace::StreamId s, uint64_t seq) {
      out.push_back(PhantomFence{before, s, seq});
      v.fences.insert({in.rank, seq});
    };
    if (windows && ri < windows->size())  // in record order: each start fence at its place
      for (const StartFence& f : (*windows)[ri].fences) fence(std::min(f.index, in.records.size()), f.stream, f.seq);
    if (fences) {  // one at the end of every stream, with seqs after the rank's last
      uint64_t max_seq = 0;
      std::set<trace::StreamId> streams;
      for (const trace::Record& r : in.records)
        if (const trace::OpCommon* op = trace::op_common(r)) {
          max_seq = std::max(max_seq, op->seq);
          streams.insert(op->stream);
        }
      for (trace::StreamId s : streams) fence(in.records.size(), s, ++max_seq);
    }
    RankRun reading;
    reading.memory = &in;
    reading.phantoms = &out;
    trace::Record buffer;
    while (const trace::Record* r = reading.next(buffer))
      if (reading.made_by_reading(r) && std::holds_alternative<trace::Access>(*r))
        v.unfootprinted.insert({in.rank, std::get<trace::Access>(*r).op_seq});
  }
  if (idle_queries == IdleQueries::ByWitnessCheck) return v;
  // The queries whose success only repeats a wait (their clocks are the same in every variant).
  AnalysisOptions idle = pass_check_options(v);
  ByRank<std::pair<int, uint64_t>> found(run);
  idle.on_idle_query = [&](int rank, uint64_t seq) { found.of(rank).emplace_back(rank, seq); };
  analyze_records(run, idle);
  for (const auto& part : found.parts()) v.idle_queries.insert(part.begin(), part.end());
  v.idle_queries_found = true;
  return v;
}

std::vector<RankRecords> with_phantoms(const std::vector<RankRecords>& run, const std::vector<PhantomFences>& fences) {
  std::vector<RankRecords> out;
  out.reserve(run.size());
  for (size_t ri = 0; ri < run.size(); ++ri) {
    RankRecords& copy = out.emplace_back();
    copy.rank = run[ri].rank;
    copy.path = run[ri].path;
    RankRun reading;
    reading.memory = &run[ri];
    reading.phantoms = &fences[ri];
    trace::Record buffer;
    while (const trace::Record* r = reading.next(buffer)) copy.records.push_back(*r);
  }
  return out;
}

VariantPairs variant_pairs(const RunVariants& v, const WhatIf* w,
                           std::map<Pair, uint64_t>* first_byte) {
  VariantPairs p;
  const auto skip = v.left_out(w ? w->drop : std::set<std::pair<int, uint64_t>>{});
  auto pairs_of = [&](const std::vector<PhantomFences>* phantoms) {
    const std::vector<RankRecords>& run = v.real();
    if (!w || (w->add.empty() && w->drop_kinds.empty()))  // no copy
      return unordered_pairs(run, v, first_byte, &skip, PassOrder::Local, nullptr, phantoms);
    if (w->drop_kinds.empty()) {  // the added waits read in place, the drops skipped
      const std::vector<RecordInserts> inserts = edit_inserts(run, *w, &v.places);
      return unordered_pairs(run, v, first_byte, &skip, PassOrder::Local, &inserts, phantoms);
    }
    // The drops again: a dropped legacy-stream barrier stays in the records, the engine skips it.
    return unordered_pairs(apply_edits(phantoms ? with_phantoms(run, *phantoms) : run, *w), v, first_byte, &skip);
  };
  p.real = pairs_of(nullptr);
  for (const auto& phantoms : v.touch) p.touch.push_back(pairs_of(&phantoms));
  return p;
}

void new_variant_pairs(const VariantPairs& now, const VariantPairs& base, PairSet& real, PairSet& all) {
  real = now.real.minus(base.real);
  all = real;
  for (size_t i = 0; i < now.touch.size() && i < base.touch.size(); ++i) all.merge(now.touch[i].minus(base.touch[i]));
}

void add_new_touch_pairs(const RunVariants& v, const VariantPairs& base, const std::set<std::pair<int, uint64_t>>& drop,
                         PairSet& all, bool first_only) {
  const auto skip = v.left_out(drop);
  for (size_t i = 0; i < v.touch.size() && i < base.touch.size(); ++i) {
    all.merge(unordered_pairs(v.real(), v, nullptr, &skip, PassOrder::Local, nullptr, &v.touch[i]).minus(base.touch[i]));
    if (first_only && !all.empty()) return;
  }
}

AnalysisOptions pass_check_options(const RunVariants& v, PassOrder order) {
  AnalysisOptions o;
  o.backfill_timings = false;
  o.local_order = order == PassOrder::Local;
  o.keep_all_readers = true;
  o.race_findings = false;  // the pairs are all the pass reads
  o.phantom_ops = &v.unfootprinted;
  o.lasting_phantom_ops = &v.fences;
  o.jobs = v.jobs;
  o.callbacks_by_rank = true;  // every caller collects by rank (by_rank.h)
  return o;
}

PairSet unordered_pairs(const std::vector<RankRecords>& run, const RunVariants& v,
                        std::map<Pair, uint64_t>* first_byte,
                        const std::set<std::pair<int, uint64_t>>* skip, PassOrder order,
                        const std::vector<RecordInserts>* inserts, const std::vector<PhantomFences>* phantoms) {
  ByRank<std::pair<Pair, uint64_t>> found(run);  // each pair with its first byte
  AnalysisOptions o = pass_check_options(v, order);
  o.skip_syncs = skip;
  o.inserts = inserts;
  o.phantoms = phantoms;
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t lo) { found.of(rank).push_back({{rank, a, b}, lo}); };
  analyze_records(run, o);
  std::vector<Pair> pairs;
  for (const auto& part : found.parts())
    for (const auto& [pair, lo] : part) {
      pairs.push_back(pair);
      if (first_byte) first_byte->try_emplace(pair, lo);  // a pair's first report holds its first byte
    }
  return PairSet(std::move(pairs));
}

PairSet unordered_after(const RunVariants& v, const WhatIf& w, const PairSet& pairs, PassOrder order) {
  if (pairs.empty()) return {};
  ByRank<Pair> left(v.real());
  // The first touch-all variant, read with its phantoms, holds every operation the pairs may name
  // (fences included); the variants' clocks are all the same.
  const std::vector<RankRecords>& run = v.real();
  const std::vector<PhantomFences>* phantoms = v.touch.empty() ? nullptr : &v.touch.front();
  const auto skip = v.left_out(w.drop);
  AnalysisOptions o = pass_check_options(v, order);
  o.skip_syncs = &skip;
  o.order_checks = &pairs.sorted();
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t) { left.of(rank).emplace_back(rank, a, b); };
  if (!w.drop_kinds.empty()) {
    analyze_records(apply_edits(phantoms ? with_phantoms(run, *phantoms) : run, w), o);
    return PairSet(left.joined());
  }
  // The added waits read in place (no copy of the run), the drops skipped.
  std::vector<RecordInserts> inserts;
  if (!w.add.empty()) {
    inserts = edit_inserts(run, w, &v.places);
    o.inserts = &inserts;
  }
  o.phantoms = phantoms;
  analyze_records(run, o);
  return PairSet(left.joined());
}

}  // namespace streamhaz::analysis
