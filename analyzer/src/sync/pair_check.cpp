#include "sync/pair_check.h"

#include <algorithm>
#include <limits>
#include <map>

#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {

RunVariants make_variants(const std::vector<RankRecords>& run, bool fences) {
  RunVariants v;
  v.real = run;
  for (const RankRecords& in : run) {
    RankRecords out;
    out.rank = in.rank;
    out.path = in.path;
    out.records.reserve(in.records.size() + in.records.size() / 4);
    uint64_t kernel = 0, max_seq = 0;
    bool footprint = false, pointer = false;
    std::map<trace::StreamId, bool> streams;
    auto close_kernel = [&] {
      if (kernel && (!footprint || pointer)) {
        out.records.push_back(trace::Access{kernel, 0, std::numeric_limits<uint64_t>::max(),
                                            trace::AccessMode::ReadWrite, trace::FootprintTier::Static});
        v.unfootprinted.insert({in.rank, kernel});
      }
      kernel = 0;
    };
    for (const trace::Record& r : in.records) {
      const bool own = std::holds_alternative<trace::Access>(r) || std::holds_alternative<trace::Timing>(r) ||
                       std::holds_alternative<trace::StringDef>(r);
      if (!own) close_kernel();
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
    if (fences) {
      for (const auto& [s, used] : streams) {
        trace::Kernel k;
        k.op = trace::OpCommon{++max_seq, s, 0};
        out.records.push_back(k);
        out.records.push_back(trace::Access{k.op.seq, 0, std::numeric_limits<uint64_t>::max(),
                                            trace::AccessMode::ReadWrite, trace::FootprintTier::Static});
        v.unfootprinted.insert({in.rank, k.op.seq});
        v.fences.insert({in.rank, k.op.seq});
      }
    }
    RankRecords read = out;
    for (trace::Record& r : read.records)
      if (auto* a = std::get_if<trace::Access>(&r); a && a->ptr == 0 && a->bytes == std::numeric_limits<uint64_t>::max())
        a->mode = trace::AccessMode::Read;
    v.touch_all.push_back(std::move(out));
    v.touch_read.push_back(std::move(read));
  }
  return v;
}

VariantPairs variant_pairs(const RunVariants& v, const WhatIf* w,
                           std::map<std::tuple<int, uint64_t, uint64_t>, uint64_t>* first_byte) {
  VariantPairs p;
  if (!w) {
    p.real = unordered_pairs(v.real, first_byte);
    p.touch_all = unordered_pairs(v.touch_all, first_byte);
    p.touch_read = unordered_pairs(v.touch_read, first_byte);
    return p;
  }
  if (w->add.empty() && w->drop_kinds.empty()) {  // drops only: skip them, no copy
    p.real = unordered_pairs(v.real, first_byte, &w->drop);
    p.touch_all = unordered_pairs(v.touch_all, first_byte, &w->drop);
    p.touch_read = unordered_pairs(v.touch_read, first_byte, &w->drop);
    return p;
  }
  // The drops again: a dropped legacy-stream barrier stays in the records, the engine skips it.
  p.real = unordered_pairs(apply_edits(v.real, *w), first_byte, &w->drop);
  p.touch_all = unordered_pairs(apply_edits(v.touch_all, *w), first_byte, &w->drop);
  p.touch_read = unordered_pairs(apply_edits(v.touch_read, *w), first_byte, &w->drop);
  return p;
}

void new_variant_pairs(const VariantPairs& now, const VariantPairs& base, PairSet& real, PairSet& all) {
  real = new_pairs(now.real, base.real);
  all = real;
  for (const PairSet& p : {new_pairs(now.touch_all, base.touch_all), new_pairs(now.touch_read, base.touch_read)})
    all.insert(p.begin(), p.end());
}

PairSet unordered_pairs(const std::vector<RankRecords>& run,
                        std::map<std::tuple<int, uint64_t, uint64_t>, uint64_t>* first_byte,
                        const std::set<std::pair<int, uint64_t>>* skip) {
  PairSet pairs;
  AnalysisOptions o;
  o.skip_syncs = skip;
  o.backfill_timings = false;
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t lo) {
    pairs.insert({rank, a, b});
    if (first_byte) first_byte->try_emplace({rank, a, b}, lo);
  };
  analyze_records(run, o);
  return pairs;
}

PairSet new_pairs(const PairSet& now, const PairSet& base) {
  PairSet out;
  std::set_difference(now.begin(), now.end(), base.begin(), base.end(), std::inserter(out, out.end()));
  return out;
}

}  // namespace streamhaz::analysis
