// CUDA's stream kinds, read off a trace's StreamCreate flags: one place for the engine, the
// replayer and the synchronisation passes (docs/analysis.md, "Happens-before rules").
#pragma once

#include <cstdint>

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

}  // namespace streamhaz::analysis
