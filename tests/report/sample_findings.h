// Hand-made findings for the report tests: a ZeRO-2-like race with awkward names (C++
// templates, quotes, a control character), an over-synchronisation, and a suppressed race.
#pragma once

#include "streamhaz/report/report_input.h"

namespace streamhaz::report::testing {

analysis::Finding sample_race();
analysis::Finding sample_oversync();
// Two findings reported, one suppressed, two traces (one truncated) and a warning.
ReportInput sample_input();

}  // namespace streamhaz::report::testing
