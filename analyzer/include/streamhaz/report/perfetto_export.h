// The timeline as Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing open:
// a process per rank, a track per stream (operations as complete events) with a second track
// of NVTX ranges under it, flow arrows for event waits, cross-rank NCCL matches and each
// finding's missing order, and an instant marker per finding.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/report/timeline.h"

namespace streamhaz::report {

struct PerfettoStats {
  uint64_t slices = 0, flows = 0, instants = 0;
};

// Writes one JSON object {"traceEvents": [...], ...}, one event per line, without holding the
// whole document in memory. Names are written as valid UTF-8 (invalid bytes become U+FFFD).
PerfettoStats write_perfetto_trace(std::ostream& out, const Timeline& timeline,
                                   const std::vector<analysis::Finding>& findings);

}  // namespace streamhaz::report
