// CUDA's stream kinds, read off a trace's StreamCreate flags: one place for the engine, the
// replayer, the what-ifs and the synchronisation passes (docs/analysis.md, "Happens-before
// rules").
#pragma once

#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// The flags of a stream the trace never created: handle 0 is the legacy default stream; any
// other is taken as an ordinary blocking stream (made before the tracer, or out of its sight).
constexpr uint32_t uncreated_stream_flags(trace::StreamId id) {
  return id == 0 ? uint32_t(trace::kStreamLegacyDefault) : 0u;
}

// The legacy default stream: each of its operations waits for the blocking streams of its
// device, and they wait for it.
constexpr bool legacy_stream(uint32_t flags) { return flags & trace::kStreamLegacyDefault; }

// A stream the legacy default stream synchronises with: created without
// cudaStreamNonBlocking, and not itself the legacy stream.
constexpr bool blocking_stream(uint32_t flags) {
  return !(flags & (trace::kStreamNonBlocking | trace::kStreamLegacyDefault));
}

// A default stream (legacy or per-thread): the CUDA runtime's, not made by the program.
constexpr bool default_stream(uint32_t flags) {
  return flags & (trace::kStreamLegacyDefault | trace::kStreamPerThreadDefault);
}

// One rank's streams as its records create and use them: which is the legacy default stream,
// which are blocking, on which device, and the devices with work on a blocking stream.
struct StreamKinds {
  std::unordered_map<trace::StreamId, std::pair<uint32_t, uint32_t>> created;  // device, flags
  std::set<uint32_t> blocking_used;  // devices with an operation on a blocking stream
  uint32_t flags(trace::StreamId s) const {
    auto it = created.find(s);
    return it != created.end() ? it->second.second : uncreated_stream_flags(s);
  }
  uint32_t device(trace::StreamId s) const {
    auto it = created.find(s);
    return it != created.end() ? it->second.first : 0;
  }
  bool legacy(trace::StreamId s) const { return legacy_stream(flags(s)); }
  bool blocking(trace::StreamId s) const { return blocking_stream(flags(s)); }
};
StreamKinds stream_kinds(const std::vector<trace::Record>& recs);

}  // namespace streamhaz::analysis
