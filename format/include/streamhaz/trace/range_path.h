// NVTX range paths ("step/backward/average_tensor"): where a training step's range sits in one.
// The tracer and the analyzer must agree on which push opens a step, so both read it here.
#pragma once

#include <algorithm>
#include <string_view>

namespace streamhaz::trace {

// Whether a range's name is one the step range `name` names: `name` is one or more names joined
// by '|', each matched whole or, ending in '*', by its prefix ("step|ProfilerStep#*" matches
// "step" and PyTorch profiler's "ProfilerStep#12").
inline bool range_name_matches(std::string_view segment, std::string_view name) {
  for (size_t pos = 0; pos <= name.size();) {
    const size_t end = std::min(name.find('|', pos), name.size());
    const std::string_view one = name.substr(pos, end - pos);
    if (!one.empty() && one.back() == '*' ? segment.substr(0, one.size() - 1) == one.substr(0, one.size() - 1)
                                          : segment == one)
      return true;
    pos = end + 1;
  }
  return false;
}

// Where the first segment of `path` that `name` matches ends, or npos: ("?/step/backward",
// "step") -> 6.
inline size_t outermost_range_end(std::string_view path, std::string_view name) {
  for (size_t pos = 0; pos <= path.size();) {
    const size_t end = std::min(path.find('/', pos), path.size());
    if (range_name_matches(path.substr(pos, end - pos), name)) return end;
    pos = end + 1;
  }
  return std::string_view::npos;
}

// Whether pushing the range with this full path opens an instance of the outermost range `name`:
// "step" and "train/step" do; "step/step" (a framework's own range inside a step) does not.
inline bool opens_outermost_range(std::string_view path, std::string_view name) {
  return !name.empty() && outermost_range_end(path, name) == path.size();
}

}  // namespace streamhaz::trace
