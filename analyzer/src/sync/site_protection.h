// What each synchronisation site protects (docs/sync-and-replay.md, "How verdicts are computed"):
// the conflicting pairs that its rank orders with the site and leaves unordered without it, in
// each variant of the run (pair_check.h). A site is one key of sync_sites.h: every instance of
// it in the judged window is removed together, as deleting the line of code would.
//
// Two ways to one answer:
//  - by witness sets (clock/witness.h): one check of each variant follows every site's edges
//    at once; linear in the run whatever the number of sites. The default.
//  - by removal: one check per site (fewer, by group testing) and variant, with the site's
//    instances left out. The reference the property test holds the first to.
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "clock/witness.h"
#include "sync/pair_check.h"
#include "sync/sync_sites.h"

namespace streamhaz::analysis {

// The judged sites: keys none of whose instances is the host's wait for a copy to host memory
// it may read (those stay, whatever else they order). Every site but legacy-stream barriers (they
// come with the stream an operation is issued on) also belongs to the group `replaceable`, the
// synchronisation the minimal synchronisation replaces.
struct SiteIds {
  std::vector<std::string> keys;                               // site id - 1 -> key
  std::map<std::pair<int, uint64_t>, SyncSiteIds> instances;  // (rank, seq) -> site id, group
  SiteId replaceable = 0;                                      // the group's id: keys.size() + 1
};
SiteIds judged_sites(const SyncSites& sites);

struct SiteProtection {
  PairSet real;  // pairs of the run as traced that only this site orders
  PairSet all;   // ...and those of the touch-all variants
  // The kernels without footprint (and fences) in those pairs, (rank, seq). By witness sets `all`
  // holds one pair per timeline of earlier phantoms (AnalysisOptions::on_phantom_ordered_by_sites),
  // so this is not read off `all`: both ways give the same set.
  std::set<std::pair<int, uint64_t>> unfootprinted;
};

struct Protection {
  VariantPairs base;                  // each variant's unordered pairs, nothing removed
  std::vector<SiteProtection> sites;  // by site id - 1
  SiteProtection replaceable;         // what the replaceable sites together protect
  std::map<Pair, uint64_t> first_byte;  // of every protected pair
};

// Whether the check of the touch-all variant says all the run's own check would: its only
// phantoms are fences, which come before or after every operation of their stream in the rank's
// records and hide no access, so that the pairs of two operations of the run, the sites that
// order them and their first bytes are the same in both checks; and no query completed, so that
// none is idle in either (a query of a stream whose only work is a fence would be in one only).
// Runs whose kernels all have footprints (annotations, the exact tier) then take one check.
bool one_check_serves_both(const RunVariants& v);

// By witness sets, one check per variant, or one for both where one_check_serves_both (`Fewest`;
// `Separate` is the reference the tests hold that to); finds `v`'s idle queries where
// make_variants left them to it.
enum class WitnessChecks : uint8_t { Fewest, Separate };
Protection protection_by_witness(RunVariants& v, const SiteIds& ids, WitnessChecks checks = WitnessChecks::Fewest);
Protection protection_by_removal(const RunVariants& v, const SiteIds& ids);

// Pairs of some rank that its own order leaves unordered but that collectives order through
// other ranks (empty for one rank). A synchronisation of any rank may be what orders them.
PairSet ordered_only_through_other_ranks(const RunVariants& v, const VariantPairs& local_base);

}  // namespace streamhaz::analysis
