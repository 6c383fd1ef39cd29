// Conflicting pairs of an edited run, through the race check itself: the engine's unordered
// pairs, one by one. Variants of a run are checked: as traced, and with every kernel that
// has no footprint (or only pointer-tier accesses) made to read and write all memory, which
// is what such a kernel may do.
//
// The pass checks each rank's own order (AnalysisOptions::local_order: a synchronisation is
// judged by what its own rank needs of it, not by order another rank's synchronisation happens
// to carry back) and keeps every read in shadow memory (keep_all_readers: a check with a
// synchronisation removed meets the same pairs as one with it).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/replay.h"
#include "sync/pair_set.h"

namespace streamhaz::analysis {

// How the pass checks: each rank's own order (the default), or with the order collectives carry
// between ranks too (only to find pairs that only other ranks order).
enum class PassOrder : uint8_t { Local, Global };

struct RunVariants {
  // The run as traced: make_variants' argument, which must outlive the variants (not a copy:
  // on a run of many ranks the records are most of the pass's memory).
  const std::vector<RankRecords>& real() const { return *real_; }
  const std::vector<RankRecords>* real_ = nullptr;
  // The run in which every kernel without footprint (or with only pointer-tier accesses) and
  // every fence accesses all memory, as a phantom (AnalysisOptions::phantom_ops): it conflicts
  // with every earlier and later access, as a write would, and hides none, since it may leave
  // any byte untouched. Read in place from the run as traced (AnalysisOptions::phantoms): what
  // is kept is each rank's fences. One variant (a vector for the checks that loop over them).
  std::vector<std::vector<PhantomFences>> touch;
  // Per rank: seqs of kernels that touch all memory in `touch` (no footprint, pointer tier,
  // or a fence standing for work outside the judged window): the phantoms.
  std::set<std::pair<int, uint64_t>> unfootprinted;
  std::set<std::pair<int, uint64_t>> fences;
  // Successful queries of an event or stream the host had already waited for (rank, seq): every
  // check of the pass leaves them out. Their success only repeats what a synchronisation told the
  // host; with that synchronisation removed they would have failed, and kept they would stand in
  // for it (a caching allocator polling its events after cudaDeviceSynchronize, say).
  std::set<std::pair<int, uint64_t>> idle_queries;
  // False until they are found: make_variants may leave that to the first witness check
  // (site_protection.h), which finds them as it goes instead of in a check of its own.
  bool idle_queries_found = false;
  // Where the real run's operations lie: every what-if of the pass places its waits by it.
  RecordPlaces places;
  // Threads each check of these variants in its ranks' own order may take (AnalysisOptions::jobs,
  // 0: every core); the checks' callbacks keep what they collect by rank (by_rank.h).
  unsigned jobs = 1;
  // `drop` and the idle queries: what a check of these variants leaves out.
  std::set<std::pair<int, uint64_t>> left_out(const std::set<std::pair<int, uint64_t>>& drop) const {
    std::set<std::pair<int, uint64_t>> out = idle_queries;
    out.insert(drop.begin(), drop.end());
    return out;
  }
};

// `fences`: the run was cut off; a touch-all kernel at the end of every stream stands for the
// work that follows, so that a synchronisation whose effect outlives the window is kept.
// `windows` (sync_window.h, one per rank, or null): touch-all kernels where the judged window left
// out a stream's earlier work, standing for it likewise.
// `idle`: find the idle queries now (a check of the run), or leave them to the witness check.
// `jobs`: RunVariants::jobs.
enum class IdleQueries : uint8_t { Find, ByWitnessCheck };
RunVariants make_variants(const std::vector<RankRecords>& run, bool fences,
                          const std::vector<struct JudgedWindow>* windows = nullptr,
                          IdleQueries idle = IdleQueries::Find, unsigned jobs = 1);
RunVariants make_variants(std::vector<RankRecords>&& run, bool fences,
                          const std::vector<struct JudgedWindow>* windows = nullptr,
                          IdleQueries idle = IdleQueries::Find, unsigned jobs = 1) = delete;  // would dangle


// The check options every check of the pass uses (a run of `v`).
AnalysisOptions pass_check_options(const RunVariants& v, PassOrder order = PassOrder::Local);

// The unordered pairs of `run`, one of `v`'s. `first_byte`, when given, gets the first
// conflicting byte of every pair.
// `inserts`: records added among the run's own (an edit read in place, AnalysisOptions::inserts).
// `phantoms`: read `run` as the run with phantoms of one of `v.touch`.
PairSet unordered_pairs(const std::vector<RankRecords>& run, const RunVariants& v,
                        std::map<Pair, uint64_t>* first_byte = nullptr,
                        const std::set<std::pair<int, uint64_t>>* skip = nullptr, PassOrder order = PassOrder::Local,
                        const std::vector<RecordInserts>* inserts = nullptr,
                        const std::vector<PhantomFences>* phantoms = nullptr);
// The run with phantoms written out (for an edit that cannot be read in place, and the tests).
std::vector<RankRecords> with_phantoms(const std::vector<RankRecords>& run, const std::vector<PhantomFences>& fences);

// The pairs of `pairs` the edited run (`w` applied to the variants) leaves unordered: what a check
// of every variant would find new, when `w` removes only synchronisations whose pairs those are
// and adds waits (order only; one clock-only pass of the run).
PairSet unordered_after(const RunVariants& v, const struct WhatIf& w, const PairSet& pairs,
                        PassOrder order = PassOrder::Local);

// The unordered pairs of every variant of a run (each edited by `w`, when given).
struct VariantPairs {
  PairSet real;
  std::vector<PairSet> touch;  // as RunVariants::touch
};
VariantPairs variant_pairs(const RunVariants& v, const struct WhatIf* w,
                           std::map<Pair, uint64_t>* first_byte = nullptr);
// What `now` has beyond `base`, over the variants: real pairs, and all pairs.
void new_variant_pairs(const VariantPairs& now, const VariantPairs& base, PairSet& real, PairSet& all);
// The touch-variant pairs that dropping `drop` adds to `base`, added to `all`; `first_only`:
// stop at the first variant that leaves `all` non-empty (enough to know the drop orders something).
void add_new_touch_pairs(const RunVariants& v, const VariantPairs& base, const std::set<std::pair<int, uint64_t>>& drop,
                         PairSet& all, bool first_only = false);

}  // namespace streamhaz::analysis
