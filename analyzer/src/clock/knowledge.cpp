#include "clock/knowledge.h"

#include <algorithm>

namespace streamhaz::analysis {

void settle_known(std::vector<Known>& set) {
  size_t frontiers = 0;
  for (Known& k : set) {
    if (k.promise && k.promise->kept()) k = Known(k.promise->value());
    if (k.frontier) ++frontiers;
  }
  // A kept promise of nothing is no knowledge.
  std::erase_if(set, [](const Known& k) { return !k.frontier && !k.promise; });
  if (frontiers < 2) return;
  if (frontiers == set.size()) {  // the usual case: no promise among them
    thread_local std::vector<FrontierRef> scratch;
    scratch.clear();
    for (Known& k : set) scratch.push_back(std::move(k.frontier));
    drop_covered(scratch);
    set.assign(scratch.begin(), scratch.end());
    return;
  }
  std::vector<FrontierRef> plain;
  std::vector<Known> promised;
  for (Known& k : set) {
    if (k.frontier) plain.push_back(std::move(k.frontier));
    else promised.push_back(std::move(k));
  }
  drop_covered(plain);
  set.assign(plain.begin(), plain.end());
  set.insert(set.end(), promised.begin(), promised.end());
}

}  // namespace streamhaz::analysis
