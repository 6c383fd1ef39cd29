// The text report, for people: one ThreadSanitizer-like block per finding, then warnings and
// a one-line summary.
#pragma once

#include <ostream>
#include <string>

#include "streamhaz/report/report_input.h"

namespace streamhaz::report {

void write_text_report(std::ostream& out, const ReportInput& input);

// The last line of the text report ("streamhaz: 2 races ..."), also printed on stderr by
// `check` when the report goes to a file.
std::string summary_line(const ReportInput& input);

// Trace-given text made safe for one line (trace::printable): a hostile or broken name cannot
// break the block layout or reach the terminal as a control sequence.
std::string printable(const std::string& text);

}  // namespace streamhaz::report
