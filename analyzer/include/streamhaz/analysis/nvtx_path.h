#pragma once
// NVTX range paths as reports print them.
#include <string>

namespace streamhaz::analysis {

// An NVTX range path without the "?" segments older tracers wrote for ranges whose message
// they could not read ("?/step/backward" -> "step/backward").
std::string nvtx_path(const std::string& path);

}  // namespace streamhaz::analysis
