// GPU intervals of the operations findings name. Timing records come any time after their
// operation, so the main pass keeps none; a finding's operations are looked up afterwards
// by rereading only the files of ranks that have findings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "streamhaz/analysis/finding.h"

namespace streamhaz::analysis {

void backfill_timings(std::vector<Finding>& findings, const std::map<int, std::string>& file_by_rank);

}  // namespace streamhaz::analysis
