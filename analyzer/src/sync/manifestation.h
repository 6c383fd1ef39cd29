// Race manifestation (docs/sync-and-replay.md, "Manifestation"): the slowdown of the earlier
// operation's stream under which a race's later operation starts before the earlier one ends in
// the replay, added to each race's detail.
#pragma once

#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {

void add_manifestation(std::vector<Finding>& races, const std::vector<RankRecords>& run, const Replayer& replay,
                       const Schedule& unchanged);

}  // namespace streamhaz::analysis
