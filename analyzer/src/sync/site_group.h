// One judged synchronisation site of a run: its instances (every rank, every step judged), its
// verdict and what it protects. The over-synchronisation pass costs each group and turns it into
// a finding or a note (sync_cost.h, oversync_report.h).
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "streamhaz/analysis/sync.h"
#include "sync/pair_check.h"
#include "sync/sync_sites.h"

namespace streamhaz::analysis {

struct SiteGroup {
  std::vector<const SyncSite*> sites;  // its instances, in the run's order
  SyncJudgement verdict = SyncJudgement::Redundant;
  PairSet protected_pairs;                          // every pair only it orders (all variants)
  uint64_t pairs = 0;                               // ...of them, pairs with known footprints
  std::set<std::pair<int, uint64_t>> unfootprinted;  // kernels without footprint among them

  const SyncSite& first() const { return *sites.front(); }
  // The what-if that removes every instance.
  std::set<std::pair<int, uint64_t>> instances() const {
    std::set<std::pair<int, uint64_t>> out;
    for (const SyncSite* s : sites) out.insert({s->rank, s->seq});
    return out;
  }
};

}  // namespace streamhaz::analysis
