// The reader's half of compressed chunks (the writer's is compress_chunks in writer.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace streamhaz::trace {

// Inflates a raw DEFLATE stream of exactly `size` bytes into exactly `out_size` bytes; false
// for anything else (damaged, shorter, longer). Throws std::bad_alloc when zlib has no memory.
bool inflate_raw(const uint8_t* in, size_t size, uint8_t* out, size_t out_size);

}  // namespace streamhaz::trace
