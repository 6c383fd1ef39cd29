// The one escaping function for text that came from a trace, a file name or the command line
// and is about to reach a terminal or a log. Such text may hold anything: an ESC sequence, a C1
// control (U+009B is a CSI on many terminals), a newline that forges an extra log line, bytes
// that are not UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace streamhaz::trace {

// `text` made safe for one line: C0 controls and DEL become \xNN, C1 controls and the
// bidirectional overrides (U+202A-U+202E, U+2066-U+2069) \uNNNN, bytes that are not UTF-8
// \xNN, and a backslash becomes \\ so that escaped and literal text cannot be confused.
// Everything else, valid UTF-8 included, is kept as it is.
std::string printable(std::string_view text);

}  // namespace streamhaz::trace
