#include "clock/witness.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace streamhaz::analysis {

Witness join_witness(const Witness& mine, const uint32_t* mine_v, size_t mine_n, const Witness& theirs,
                     const uint32_t* theirs_v, size_t theirs_n, EdgeSites edge) {
  constexpr SiteId kNone = std::numeric_limits<SiteId>::max();
  // The edge's sites, ascending, without zeros.
  SiteId via[2] = {edge.site ? edge.site : kNone, edge.group ? edge.group : kNone};
  if (via[0] > via[1]) std::swap(via[0], via[1]);
  auto on_edge = [&](SiteId x) { return x != kNone && (x == via[0] || x == via[1]); };
  Witness out;
  const size_t n = std::max(mine_n, theirs_n);
  size_t i = 0, j = 0;
  for (uint32_t t = 0; t < n; ++t) {
    const uint32_t kd = t < mine_n ? mine_v[t] : 0, ks = t < theirs_n ? theirs_v[t] : 0;
    const uint32_t k = std::max(kd, ks);
    // Sites whose removal may lower what the join knows of t: those mine or theirs depend on,
    // and the edge's own sites where it brings more than mine knows.
    size_t v = ks > kd ? 0 : 2;  // the next of the edge's sites to consider
    for (;;) {
      const SiteId a = i < mine.size() && mine[i].timeline == t ? mine[i].site : kNone;
      const SiteId b = j < theirs.size() && theirs[j].timeline == t ? theirs[j].site : kNone;
      const SiteId c = v < 2 ? via[v] : kNone;
      const SiteId x = std::min({a, b, c});
      if (x == kNone) break;
      const uint32_t without_mine = x == a ? mine[i].without : kd;
      const uint32_t without_theirs = on_edge(x) ? 0 : x == b ? theirs[j].without : ks;
      const uint32_t without = std::max(without_mine, without_theirs);
      if (without < k) out.push_back(WitnessEntry{t, x, without});
      if (x == a) ++i;
      if (x == b) ++j;
      if (x == c) ++v;
    }
  }
  return out;
}

}  // namespace streamhaz::analysis
