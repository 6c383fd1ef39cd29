// The HTML report, for people: one self-contained file (no network, no external script or
// font) with the summary, every finding and a zoomable timeline of each rank's streams.
// docs/report.md is the user's manual.
#pragma once

#include <cstdint>
#include <ostream>

#include "streamhaz/report/report_input.h"
#include "streamhaz/report/timeline.h"

namespace streamhaz::report {

struct HtmlReportOptions {
  // Operations drawn one by one; past this, those nearest the findings are, the rest are
  // aggregated into time bins per stream (keeps a 1 M-operation run's page small).
  uint64_t detail_ops = 200000;
};

struct HtmlReportStats {
  uint64_t ops_detailed = 0;
  uint64_t ops_aggregated = 0;
  uint64_t bins = 0;
};

HtmlReportStats write_html_report(std::ostream& out, const ReportInput& input, const Timeline& timeline,
                                  const HtmlReportOptions& options = {});

}  // namespace streamhaz::report
