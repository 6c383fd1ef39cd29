#include "streamhaz/tracer/chunk_buffer.h"

namespace streamhaz::tracer {

void ChunkBuffer::add(const trace::Record& r) {
  encoder_.add(r);
  ++records_;
  if (encoder_.payload_bytes() >= chunk_bytes_) encoder_.finish_into(ready_);
}

void ChunkBuffer::add_pointer_accesses(uint64_t op_seq, std::span<const uint64_t> ptrs,
                                       std::span<const trace::AccessMode> modes, trace::FootprintTier tier) {
  encoder_.add_pointer_accesses(op_seq, ptrs, modes, tier);
  records_ += ptrs.size();
  if (encoder_.payload_bytes() >= chunk_bytes_) encoder_.finish_into(ready_);
}

void ChunkBuffer::take(std::string& out, bool include_partial) {
  if (include_partial && !encoder_.empty()) encoder_.finish_into(ready_);
  if (out.empty()) {
    out.swap(ready_);
  } else {
    out += ready_;
  }
  ready_.clear();
}

}  // namespace streamhaz::tracer
