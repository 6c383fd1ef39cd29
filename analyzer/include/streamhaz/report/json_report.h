// The JSON report, for tools. Its schema is docs/schema/findings.schema.json; a change that
// removes or retypes a field raises kJsonSchemaVersion (adding fields does not). Keys keep
// their written order (schema_version first) so the file reads well.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "streamhaz/report/report_input.h"

namespace streamhaz::report {

inline constexpr int kJsonSchemaVersion = 1;

nlohmann::ordered_json json_report(const ReportInput& input);
void write_json_report(std::ostream& out, const ReportInput& input);

}  // namespace streamhaz::report
