// FieldReader's slow paths: varints of more than one byte, and the errors.
#include "field_reader.h"

namespace streamhaz::trace::detail {

void throw_message(const char* what) { throw std::string(what); }

void throw_out_of_range(const char* what, uint64_t v) {
  throw std::string(what) + " value " + std::to_string(v) + " out of range";
}

void throw_not_a_flag(uint64_t v) { throw std::string("flag value ") + std::to_string(v) + " is not 0 or 1"; }

void throw_string_too_long(uint64_t bytes, bool past_chunk_end) {
  if (past_chunk_end) throw std::string("string of ") + std::to_string(bytes) + " bytes runs past the end of its chunk";
  throw std::string("meta record of ") + std::to_string(bytes) + " bytes exceeds the 1 MiB header limit";
}

VarintRead read_long_varint(const uint8_t* data, size_t size, size_t pos) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= size) throw_message("record runs past the end of its chunk");
    const uint8_t b = data[pos++];
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return {v, pos};
  }
  throw_message("varint longer than 10 bytes");
}

}  // namespace streamhaz::trace::detail
