// A what-if's added waits placed among a run's records (edit_inserts), and the index of a run's
// operations that lets a run edited many times place them without reading its records.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {
namespace {

// An event id the rank's records use, or 0.
trace::EventId event_of(const trace::Record& r) {
  if (const auto* c = std::get_if<trace::EventCreate>(&r)) return c->event;
  if (const auto* c = std::get_if<trace::EventRecord>(&r)) return c->event;
  if (const auto* c = std::get_if<trace::EventWait>(&r)) return c->event;
  return 0;
}

// A rank's operations named by its added waits: `named` (sorted, unique seqs) and where each
// lies among the records, (record index, slot in `named`) in record order.
struct NamedOps {
  std::vector<uint64_t> named;
  std::vector<std::pair<size_t, size_t>> at;
  trace::EventId next_event = 1;
  size_t slot(uint64_t seq) const {
    auto it = std::lower_bound(named.begin(), named.end(), seq);
    return it != named.end() && *it == seq ? static_cast<size_t>(it - named.begin()) : named.size();
  }
};

NamedOps find_named(const RankRecords& in, const std::vector<const AddedWait*>& adds, const RecordPlaces* places,
                    size_t ri) {
  NamedOps n;
  for (const AddedWait* a : adds) n.named.insert(n.named.end(), {a->after_seq, a->before_seq});
  std::sort(n.named.begin(), n.named.end());
  n.named.erase(std::unique(n.named.begin(), n.named.end()), n.named.end());
  if (places) {
    const auto& ops = places->ops(ri);
    for (size_t k = 0; k < n.named.size(); ++k)
      for (auto it = std::lower_bound(ops.begin(), ops.end(), std::pair<uint64_t, size_t>{n.named[k], 0});
           it != ops.end() && it->first == n.named[k]; ++it)
        n.at.push_back({it->second, k});
    std::sort(n.at.begin(), n.at.end());
    n.next_event = places->first_free_event(ri);
    return n;
  }
  for (size_t i = 0; i < in.records.size(); ++i) {
    const trace::Record& r = in.records[i];
    n.next_event = std::max(n.next_event, event_of(r) + 1);
    if (const trace::OpCommon* op = trace::op_common(r))
      if (const size_t k = n.slot(op->seq); k < n.named.size()) n.at.push_back({i, k});
  }
  return n;
}

}  // namespace

RecordPlaces::RecordPlaces(const std::vector<RankRecords>& run) : run_(&run), ranks_(run.size()) {
  for (size_t ri = 0; ri < run.size(); ++ri) {
    Rank& rank = ranks_[ri];
    const std::vector<trace::Record>& records = run[ri].records;
    for (size_t i = 0; i < records.size(); ++i) {
      const trace::Record& r = records[i];
      rank.first_free_event = std::max(rank.first_free_event, event_of(r) + 1);
      if (const trace::OpCommon* op = trace::op_common(r)) rank.ops.push_back({op->seq, i});
      else if (std::holds_alternative<trace::StringDef>(r) || std::holds_alternative<trace::StreamName>(r) ||
               std::holds_alternative<trace::BufferName>(r))
        rank.names.push_back(i);
    }
    std::sort(rank.ops.begin(), rank.ops.end());
  }
}

std::vector<RecordInserts> edit_inserts(const std::vector<RankRecords>& run, const WhatIf& w,
                                        const RecordPlaces* places) {
  if (places && !places->of(run)) places = nullptr;
  std::vector<RecordInserts> out(run.size());
  // The added waits by rank: every rank looking at every wait would cost ranks x waits.
  std::map<int, std::vector<const AddedWait*>> adds_of;
  for (const AddedWait& a : w.add) adds_of[a.rank].push_back(&a);
  for (size_t ri = 0; ri < run.size(); ++ri) {
    const RankRecords& in = run[ri];
    const auto found = adds_of.find(in.rank);
    if (found == adds_of.end()) continue;  // no scan of a rank without added waits
    const std::vector<const AddedWait*>& adds = found->second;
    NamedOps n = find_named(in, adds, places, ri);
    std::vector<bool> present(n.named.size());
    for (const auto& [i, k] : n.at) present[k] = true;
    std::vector<std::vector<trace::EventId>> record_after(n.named.size()), wait_before(n.named.size());
    for (const AddedWait* ap : adds) {
      const AddedWait& a = *ap;
      const bool has_after = present[n.slot(a.after_seq)], has_before = present[n.slot(a.before_seq)];
      if (!has_after || !has_before)
        throw WhatIfError(
            fmt::format("add-wait: rank {} has no operation with seq {}", a.rank, has_after ? a.before_seq : a.after_seq));
      const trace::EventId e = n.next_event++;
      record_after[n.slot(a.after_seq)].push_back(e);
      wait_before[n.slot(a.before_seq)].push_back(e);
    }
    // A wait goes right before its operation; an event record after the operation, behind the
    // records that belong to it (its Access and Timing records), so before the next record that
    // does not. At one place the records due after the previous operation come first.
    struct Placed {
      size_t before;
      bool wait;
      trace::EventId event;
      trace::StreamId stream;
    };
    std::vector<Placed> placed;
    auto belongs = [](const trace::Record& r) {
      return std::holds_alternative<trace::Access>(r) || std::holds_alternative<trace::Timing>(r) ||
             std::holds_alternative<trace::StringDef>(r);
    };
    for (const auto& [i, k] : n.at) {
      const trace::StreamId stream = trace::op_common(in.records[i])->stream;
      for (trace::EventId e : wait_before[k]) placed.push_back({i, true, e, stream});
      if (record_after[k].empty()) continue;
      size_t next = i + 1;
      while (next < in.records.size() && belongs(in.records[next])) ++next;
      for (trace::EventId e : record_after[k]) placed.push_back({next, false, e, stream});
    }
    std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
      return a.before != b.before ? a.before < b.before : !a.wait && b.wait;
    });
    RecordInserts& inserts = out[ri];
    inserts.reserve(placed.size() * 2);  // at most two records each: no growth to fault in
    for (const Placed& p : placed) {
      if (p.wait) {
        inserts.push_back({p.before, trace::EventWait{0, p.stream, p.event}});
        continue;
      }
      inserts.push_back({p.before, trace::EventCreate{p.event, 2}, true});
      inserts.push_back({p.before, trace::EventRecord{0, p.event, p.stream}, true});
    }
  }
  return out;
}

}  // namespace streamhaz::analysis
