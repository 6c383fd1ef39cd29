// A race finding's words: its title, detail, the missing order and the stable key, from the
// facts the engine gathered about one conflicting pair (engine/rank_engine_report.cpp).
#pragma once

#include <string>

#include "streamhaz/analysis/finding.h"

namespace streamhaz::analysis {

struct RaceFacts {
  bool possible = false;        // pointer evidence not enough for a race (engine/pointer_evidence.h)
  OpRef first, second;          // as reports name them, with their roles
  bool second_on_host = false;  // the later side is done by the host (cudaFree)
  BufferRef buffer;             // the buffer, and where in it the pair conflicts
  std::string buffer_key;       // the buffer as keys name it: stable across runs, unlike addresses
  trace::FootprintTier tier = trace::FootprintTier::Api;  // the weaker side's
  bool exact = true;                                      // both sides' byte ranges exact
  bool directed_write = false;  // a pointer-tier side writes by its calling convention
  bool in_graph = false;        // a side ran as part of a CUDA graph launch
};

Finding race_finding(RaceFacts facts);

}  // namespace streamhaz::analysis
