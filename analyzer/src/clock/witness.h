// Which synchronisation sites a clock's knowledge rests on: the over-synchronisation pass's
// witness sets (docs/sync-and-replay.md, "How verdicts are computed").
//
// A clock knows each timeline up to some value. For a site X (every instance of one
// synchronisation call site on this rank), `without` is what the clock would know of that
// timeline if X's edges were removed from the run. An entry is kept only where that is less than
// what the clock knows, so a clock whose knowledge arrived by routes that avoid every site has
// none. Joins combine entries along with the values: knowledge arriving through a site's edge
// is lost without that site; knowledge arriving by two routes is lost only where both are.
// A conflicting pair (a, b) ordered in the run is then ordered only through site X exactly when
// b's clock has an entry (a's timeline, X) whose `without` is below a's epoch: one forward pass
// answers, for every site at once, what removing it and checking again would find.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace streamhaz::analysis {

using SiteId = uint32_t;  // 0: no site (an edge the pass does not judge)

// The sites an edge belongs to: its own, and a group of sites removed together (the minimal
// synchronisation removes every synchronisation it may replace). 0: none.
struct EdgeSites {
  SiteId site = 0;
  SiteId group = 0;
  explicit operator bool() const { return site || group; }
};

struct WitnessEntry {
  uint32_t timeline = 0;
  SiteId site = 0;
  uint32_t without = 0;  // the clock's value for `timeline` without the site's edges
  bool operator==(const WitnessEntry&) const = default;
};

// Entries sorted by (timeline, site); at most one per pair.
using Witness = std::vector<WitnessEntry>;

// The entries of the join of clock `mine` (values `mine_v`, `mine_n`) with `theirs` (values
// `theirs_v`, `theirs_n`) where `theirs` arrives through an edge of the sites `via` (none: a plain
// edge). Values are those before the join.
Witness join_witness(const Witness& mine, const uint32_t* mine_v, size_t mine_n, const Witness& theirs,
                     const uint32_t* theirs_v, size_t theirs_n, EdgeSites via);

}  // namespace streamhaz::analysis
