// CUPTI activity: GPU start/end timestamps of kernels, copies and sets, handed to the
// recorder by correlation id from CUPTI's buffer-completion thread.
#pragma once

#include <string>

namespace streamhaz::tracer::glue {

bool start_activity(std::string& why_not);
void flush_activity();  // blocks until CUPTI delivered every buffer

}  // namespace streamhaz::tracer::glue
