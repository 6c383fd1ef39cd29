#include "sync/pair_check.h"

#include <algorithm>
#include <limits>
#include <map>

#include "streamhaz/analysis/replay.h"
#include "sync/sync_window.h"

namespace streamhaz::analysis {

RunVariants make_variants(const std::vector<RankRecords>& run, bool fences, const std::vector<JudgedWindow>* windows,
                          IdleQueries idle_queries) {
  RunVariants v;
  v.real_ = &run;
  std::vector<RankRecords>& all = v.touch.emplace_back(run.size());
  for (size_t ri = 0; ri < run.size(); ++ri) {
    const RankRecords& in = run[ri];
    const std::vector<StartFence> none;
    const std::vector<StartFence>& starts = windows && ri < windows->size() ? (*windows)[ri].fences : none;
    size_t next_start = 0, index = 0;
    RankRecords& out = all[ri];
    out.rank = in.rank;
    out.path = in.path;
    // Room for a phantom per kernel, the start fences and the end fences of up to eight streams
    // (a fence is a kernel and its access): the variant lives as long as the pass.
    const size_t kernels = static_cast<size_t>(std::count_if(in.records.begin(), in.records.end(), [](const trace::Record& r) {
      return std::holds_alternative<trace::Kernel>(r);
    }));
    out.records.reserve(in.records.size() + kernels + 2 * starts.size() + 16);
    uint64_t kernel = 0, max_seq = 0;
    bool footprint = false, pointer = false;
    std::map<trace::StreamId, bool> streams;
    // An access of all memory, a phantom in the pass's checks (AnalysisOptions::phantom_ops).
    auto touch_access = [&](uint64_t seq) {
      out.records.push_back(trace::Access{seq, 0, std::numeric_limits<uint64_t>::max(), trace::AccessMode::ReadWrite,
                                          trace::FootprintTier::Static});
      v.unfootprinted.insert({in.rank, seq});
    };
    auto close_kernel = [&] {
      if (kernel && (!footprint || pointer)) touch_access(kernel);
      kernel = 0;
    };
    auto fence = [&](trace::StreamId s, uint64_t seq) {
      trace::Kernel k;
      k.op = trace::OpCommon{seq, s, 0};
      out.records.push_back(k);
      touch_access(seq);
      v.fences.insert({in.rank, seq});
    };
    for (const trace::Record& r : in.records) {
      const bool own = std::holds_alternative<trace::Access>(r) || std::holds_alternative<trace::Timing>(r) ||
                       std::holds_alternative<trace::StringDef>(r);
      if (!own) close_kernel();
      for (; next_start < starts.size() && starts[next_start].index == index; ++next_start)
        fence(starts[next_start].stream, starts[next_start].seq);
      ++index;
      if (const auto* a = std::get_if<trace::Access>(&r); a && a->op_seq == kernel) {
        if (a->bytes == 0 || a->tier == trace::FootprintTier::Pointer) {
          pointer = true;  // extent unknown: taken as all memory
          continue;
        }
        footprint = true;
      }
      out.records.push_back(r);
      if (const trace::OpCommon* op = trace::op_common(r)) {
        max_seq = std::max(max_seq, op->seq);
        streams[op->stream] = true;
        if (std::holds_alternative<trace::Kernel>(r)) {
          kernel = op->seq;
          footprint = pointer = false;
        }
      }
    }
    close_kernel();
    for (; next_start < starts.size(); ++next_start) fence(starts[next_start].stream, starts[next_start].seq);
    if (fences)
      for (const auto& [s, used] : streams) fence(s, ++max_seq);
    // Pointer-tier accesses left out (nine a kernel on a PyTorch trace): give back their room.
    if (out.records.capacity() > out.records.size() + out.records.size() / 8) out.records.shrink_to_fit();
  }
  if (idle_queries == IdleQueries::ByWitnessCheck) return v;
  // The queries whose success only repeats a wait (their clocks are the same in every variant).
  AnalysisOptions idle = pass_check_options(v);
  idle.on_idle_query = [&](int rank, uint64_t seq) { v.idle_queries.insert({rank, seq}); };
  analyze_records(run, idle);
  v.idle_queries_found = true;
  return v;
}

VariantPairs variant_pairs(const RunVariants& v, const WhatIf* w,
                           std::map<Pair, uint64_t>* first_byte) {
  VariantPairs p;
  const auto skip = v.left_out(w ? w->drop : std::set<std::pair<int, uint64_t>>{});
  auto pairs_of = [&](const std::vector<RankRecords>& run) {
    if (!w || (w->add.empty() && w->drop_kinds.empty())) return unordered_pairs(run, v, first_byte, &skip);  // no copy
    if (w->drop_kinds.empty()) {  // the added waits read in place, the drops skipped
      const std::vector<RecordInserts> inserts = edit_inserts(run, *w);
      return unordered_pairs(run, v, first_byte, &skip, PassOrder::Local, &inserts);
    }
    // The drops again: a dropped legacy-stream barrier stays in the records, the engine skips it.
    return unordered_pairs(apply_edits(run, *w), v, first_byte, &skip);
  };
  p.real = pairs_of(v.real());
  for (const auto& run : v.touch) p.touch.push_back(pairs_of(run));
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
    all.merge(unordered_pairs(v.touch[i], v, nullptr, &skip).minus(base.touch[i]));
    if (first_only && !all.empty()) return;
  }
}

AnalysisOptions pass_check_options(const RunVariants& v, PassOrder order) {
  AnalysisOptions o;
  o.backfill_timings = false;
  o.local_order = order == PassOrder::Local;
  o.keep_all_readers = true;
  o.phantom_ops = &v.unfootprinted;
  o.lasting_phantom_ops = &v.fences;
  return o;
}

PairSet unordered_pairs(const std::vector<RankRecords>& run, const RunVariants& v,
                        std::map<Pair, uint64_t>* first_byte,
                        const std::set<std::pair<int, uint64_t>>* skip, PassOrder order,
                        const std::vector<RecordInserts>* inserts) {
  std::vector<Pair> pairs;
  AnalysisOptions o = pass_check_options(v, order);
  o.skip_syncs = skip;
  o.inserts = inserts;
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t lo) {
    pairs.emplace_back(rank, a, b);
    if (first_byte) first_byte->try_emplace({rank, a, b}, lo);
  };
  analyze_records(run, o);
  return PairSet(std::move(pairs));
}

PairSet unordered_after(const RunVariants& v, const WhatIf& w, const PairSet& pairs, PassOrder order) {
  if (pairs.empty()) return {};
  std::vector<Pair> left;
  // The first touch-all variant holds every operation the pairs may name (fences included);
  // the variants' clocks are all the same.
  const std::vector<RankRecords>& run = v.touch.empty() ? v.real() : v.touch.front();
  const auto skip = v.left_out(w.drop);
  AnalysisOptions o = pass_check_options(v, order);
  o.skip_syncs = &skip;
  o.order_checks = &pairs.sorted();
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t) { left.emplace_back(rank, a, b); };
  if (!w.drop_kinds.empty()) {
    analyze_records(apply_edits(run, w), o);
    return PairSet(std::move(left));
  }
  // The added waits read in place (no copy of the run), the drops skipped.
  std::vector<RecordInserts> inserts;
  if (!w.add.empty()) {
    inserts = edit_inserts(run, w);
    o.inserts = &inserts;
  }
  analyze_records(run, o);
  return PairSet(std::move(left));
}

}  // namespace streamhaz::analysis
