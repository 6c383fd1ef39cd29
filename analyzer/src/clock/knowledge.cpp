#include "clock/knowledge.h"

#include <algorithm>

namespace streamhaz::analysis {

void settle_known(std::vector<Known>& set) {
  for (Known& k : set)
    if (k.promise && k.promise->kept()) k = Known(k.promise->value());
  std::erase_if(set, [](const Known& k) { return !k.frontier && !k.promise; });  // a promise of nothing
  const size_t n = set.size();
  if (n < 2 || n > 64) return;  // a handful per clock: one bit each
  // drop_covered's rule over the frontiers of the set, decided against the whole set; unkept
  // promises neither cover nor are covered.
  uint64_t dropped = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!set[i].frontier) continue;
    const uint64_t id = set[i].frontier->id();
    for (size_t j = 0; j < n; ++j) {
      if (i == j || !set[j].frontier) continue;
      const bool covered = set[j].frontier->id() == id ? j < i : set[j].frontier->covers(id);
      if (covered) {
        dropped |= uint64_t(1) << i;
        break;
      }
    }
  }
  if (!dropped) return;
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i)
    if (!((dropped >> i) & 1)) set[kept++] = std::move(set[i]);
  set.resize(kept);
}

}  // namespace streamhaz::analysis
