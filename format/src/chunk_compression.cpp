// Compressed chunks: a trace's records are small varints with much repetition (kernel names by
// id, recurring call sites, pointer deltas), which zlib's fastest level halves or better. rr
// compresses its trace the same way, per block, so each block still decodes on its own.
#include <stdexcept>

#include <zlib.h>

#include "layout.h"
#include "streamhaz/trace/writer.h"

namespace streamhaz::trace {

void compress_chunks(std::string_view chunks, std::string& out) {
  std::string packed;
  size_t pos = 0;
  while (pos < chunks.size()) {
    if (chunks.size() - pos < layout::kChunkHeaderBytes) throw std::logic_error("compress_chunks: cut chunk header");
    const auto* head = reinterpret_cast<const uint8_t*>(chunks.data() + pos);
    const uint32_t payload = layout::get_u32(head + 4);
    const size_t whole = layout::kChunkHeaderBytes + payload;
    if (layout::get_u32(head) != layout::kChunkMagic || chunks.size() - pos < whole)
      throw std::logic_error("compress_chunks: not a whole raw chunk");
    const auto* raw = reinterpret_cast<const Bytef*>(chunks.data() + pos + layout::kChunkHeaderBytes);
    uLongf bound = compressBound(payload);
    packed.resize(4 + bound);
    layout::put_u32(packed.data(), payload);
    const bool ok = compress2(reinterpret_cast<Bytef*>(packed.data() + 4), &bound, raw, payload, Z_BEST_SPEED) == Z_OK;
    packed.resize(4 + bound);
    if (!ok || packed.size() >= payload) {
      out.append(chunks.substr(pos, whole));
    } else {
      char h[layout::kChunkHeaderBytes];
      layout::put_u32(h, layout::kCompressedChunkMagic);
      layout::put_u32(h + 4, static_cast<uint32_t>(packed.size()));
      layout::put_u32(h + 8, layout::get_u32(head + 8));  // record count
      const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(packed.data()), static_cast<uInt>(packed.size()));
      layout::put_u32(h + 12, static_cast<uint32_t>(crc));
      out.append(h, sizeof h);
      out.append(packed);
    }
    pos += whole;
  }
}

}  // namespace streamhaz::trace
