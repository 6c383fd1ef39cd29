// The minimal synchronisation: given the conflicting pairs a run must keep ordered, the
// fewest event waits (recorded right after the last earlier operation a wait must cover,
// waited on right before the first later operation that needs it) that order them all,
// with the rest of the run's ordering (kept synchronisations, stream order) counted.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "streamhaz/analysis/replay.h"
#include "sync/pair_check.h"

namespace streamhaz::analysis {

// `dropped`: the synchronisations the waits replace (rank, seq). Returns the added waits.
// `jobs` (AnalysisOptions::jobs): threads that take ranks at once, here and below.
std::vector<AddedWait> place_waits(const std::vector<RankRecords>& run, const PairSet& pairs,
                                   const std::set<std::pair<int, uint64_t>>& dropped, unsigned jobs = 1);

// Advice lines for people, folded by pattern: which stream records after which operation,
// which stream waits before which one, and for which buffers. `places`: the run's, where kept
// (the same lines, without a read of every record).
std::vector<std::string> describe_waits(const std::vector<RankRecords>& run, const std::vector<AddedWait>& waits,
                                        const PairSet& pairs, const std::map<Pair, uint64_t>& first_byte,
                                        const RecordPlaces* places = nullptr, unsigned jobs = 1);

}  // namespace streamhaz::analysis
