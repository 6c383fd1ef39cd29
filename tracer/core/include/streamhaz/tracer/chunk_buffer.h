// Encodes records into chunks in memory; the session moves finished chunks to the file off
// the API path. Not locked itself: the recorder calls add() under its mutex and the session
// calls take() under the same mutex.
#pragma once

#include <cstdint>
#include <string>

#include "streamhaz/trace/writer.h"
#include "streamhaz/tracer/hot_path.h"
#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer {

class ChunkBuffer : public RecordSink {
 public:
  explicit ChunkBuffer(size_t chunk_bytes = 64 * 1024) : chunk_bytes_(chunk_bytes) {}
  STREAMHAZ_HOT void add(const trace::Record& r) override;
  STREAMHAZ_HOT void add_pointer_accesses(uint64_t op_seq, std::span<const uint64_t> ptrs,
                                          std::span<const trace::AccessMode> modes, trace::FootprintTier tier) override;
  // Appends the finished chunks to `out` (and the partial one too if `include_partial`).
  void take(std::string& out, bool include_partial);
  uint64_t records() const { return records_; }
  size_t ready_bytes() const { return ready_.size(); }

 private:
  size_t chunk_bytes_;
  trace::ChunkEncoder encoder_;
  std::string ready_;  // whole chunks not yet written
  uint64_t records_ = 0;
};

}  // namespace streamhaz::tracer
