// One trace's call-stack definitions (strings, modules, frames, call sites) as read, and their
// resolution into Stacks: innermost frame first, native frames symbolised offline.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

class NativeSymbolizer;

class StackTable {
 public:
  // Keeps the definitions among `r` (string, module, frame and call-site records); ignores the rest.
  void add(const trace::Record& r);
  // The frames of call site `id`, innermost first; empty for 0 or an unknown id. At most
  // kMaxDepth frames (a stack deeper than that is cut at its outer end). `symbolizer` may be null.
  Stack resolve(trace::CallsiteId id, NativeSymbolizer* symbolizer) const;
  bool empty() const { return callsites_.empty(); }
  size_t callsites() const { return callsites_.size(); }
  size_t frames() const { return frames_.size(); }

  static constexpr size_t kMaxDepth = 512;

 private:
  const std::string& text(trace::StringId id) const;
  StackFrame frame(trace::FrameId id, NativeSymbolizer* symbolizer) const;

  std::unordered_map<trace::StringId, std::string> strings_;
  std::unordered_map<trace::ModuleId, trace::ModuleDef> modules_;
  std::unordered_map<trace::FrameId, trace::FrameDef> frames_;
  std::unordered_map<trace::CallsiteId, trace::CallsiteDef> callsites_;
  mutable std::unordered_map<trace::FrameId, StackFrame> resolved_;  // symbolising is slow
};

}  // namespace streamhaz::analysis
