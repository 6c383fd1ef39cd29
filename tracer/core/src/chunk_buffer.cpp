#include "streamhaz/tracer/chunk_buffer.h"

namespace streamhaz::tracer {

void ChunkBuffer::add(const trace::Record& r) {
  encoder_.add(r);
  ++records_;
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
