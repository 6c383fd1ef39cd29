// What the verbs print on standard error, in one place: every message goes through
// trace::printable, since file names, arguments and trace contents may hold control
// characters (a file name with a newline would otherwise forge an extra line).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace streamhaz::cli {

// Prints "streamhaz VERB: WHAT" (WHAT escaped) on stderr.
void say(std::string_view verb, std::string_view what);
// Prints "streamhaz VERB: WHAT" (WHAT escaped) on stderr; returns kExitUsage.
int usage_error(std::string_view verb, std::string_view what);
// Prints "streamhaz VERB: warning: WHAT" (WHAT escaped) on stderr.
void warning(std::string_view verb, std::string_view what);
void warnings(std::string_view verb, const std::vector<std::string>& what);
// Flushes standard output; false (with one message) when it could not be written, as with a
// full disk or a closed pipe: a verb must not exit 0 on output nobody could read.
bool stdout_written(std::string_view verb);

}  // namespace streamhaz::cli
