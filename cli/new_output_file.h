// Writing a verb's output file without ever clobbering what the user has: the content goes to
// a temporary file beside the target, which then takes the target's name only if no file has
// it (or with --force). A failure half-way leaves the target as it was.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace streamhaz::cli {

// Throws std::runtime_error naming the path (exists without `force`, cannot write).
void write_new_file(const std::string& path, bool force, const std::function<void(std::ostream&)>& write);

// For a check before a long analysis: the message write_new_file() would fail with, or "".
std::string refuse_existing(const std::string& path, bool force);

}  // namespace streamhaz::cli
