// The SARIF 2.1.0 report, for code-scanning services (GitHub code scanning and the like).
// One rule per finding kind; suppressed findings stay in the log marked as suppressed.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "streamhaz/report/report_input.h"

namespace streamhaz::report {

nlohmann::ordered_json sarif_report(const ReportInput& input);
void write_sarif_report(std::ostream& out, const ReportInput& input);

}  // namespace streamhaz::report
