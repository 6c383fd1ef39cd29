// What a synchronisation site costs (docs/sync-and-replay.md, "Verdicts and findings"): the stall
// it caused in the captured run, from the fitted replay's measured schedule, and the step time the
// replay predicts without it (redundant) or with the minimal waits for what it protects instead
// (protects, may-protect). The stall counts every judged step; the replayed change is one step's,
// from a sample of them (cost_sample.h).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "streamhaz/analysis/replay.h"
#include "streamhaz/analysis/sync.h"
#include "sync/cost_sample.h"
#include "sync/pair_check.h"
#include "sync/site_group.h"

namespace streamhaz::analysis {

// Per rank index, the intervals whose stalls count as the steps'.
using StallWindows = std::vector<std::vector<std::pair<int64_t, int64_t>>>;
StallWindows stall_windows(const std::vector<RankRecords>& run, const Schedule& measured);

struct SiteCostContext {
  const std::vector<RankRecords>& run;  // the judged window
  const Replayer& replay;
  const Schedule& unchanged;   // replay->run_unchanged()
  const StallWindows& windows;
  const RunVariants& variants;
  const CostRun& sample;       // what the site's removal is replayed on (cost_sample.h)
  double min_cost = 0.01;
};

// Fills `v`'s stall, step times and `finding` for group `g`.
void cost_site(const SiteGroup& g, const SiteCostContext& c, SyncVerdict& v);

}  // namespace streamhaz::analysis
