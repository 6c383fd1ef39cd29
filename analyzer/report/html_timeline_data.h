// The data the HTML report's timeline script draws: operations (all of them up to a budget,
// beyond it those around the findings), the rest aggregated into time bins per stream, event
// waits, timed windows and the findings' operations.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "streamhaz/report/report_input.h"
#include "streamhaz/report/timeline.h"

namespace streamhaz::report {

struct TimelineDataStats {
  uint64_t ops_detailed = 0;
  uint64_t ops_aggregated = 0;
  uint64_t bins = 0;
};

// `detail_ops`: at most this many operations are drawn one by one (the ones nearest the
// findings first); the others become per-stream bins of `bins_per_rank` across each rank's span.
nlohmann::json timeline_data(const ReportInput& input, const Timeline& timeline, uint64_t detail_ops,
                             TimelineDataStats& stats, uint32_t bins_per_rank = 2000);

}  // namespace streamhaz::report
