// Race manifestation (docs/sync-and-replay.md, "Manifestation"): the slowdown of the earlier
// operation's stream under which a race's later operation starts before the earlier one ends in
// the replay, added to each race's detail.
#pragma once

#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/analysis/replay.h"
#include "sync/cost_sample.h"

namespace streamhaz::analysis {

// `runs`: what to replay, in order of preference (cost_sample.h: the sample, then the window); a
// race is replayed on the first that holds both its operations, and left as it is where none does.
void add_manifestation(std::vector<Finding>& races, const std::vector<const CostRun*>& runs);

}  // namespace streamhaz::analysis
