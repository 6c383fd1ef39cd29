// Compressed chunks: a trace's records are small varints with much repetition (kernel names by
// id, recurring call sites, pointer deltas), which zlib's fastest level halves or better. rr
// compresses its trace the same way, per block, so each block still decodes on its own.
// Raw DEFLATE (no zlib wrapper): the chunk's CRC-32 already covers the stored bytes, and the
// wrapper's Adler-32 of the output cost a reader 3 % of its instructions.
#include "chunk_compression.h"

#include <new>
#include <stdexcept>

#include <zlib.h>

#include "layout.h"
#include "streamhaz/trace/writer.h"

namespace streamhaz::trace {
namespace {

constexpr int kRawDeflate = -15;  // window bits: 32 KiB window, no zlib header or trailer

// Deflates `in` into `out` (resized to fit); false if zlib fails.
bool deflate_raw(const uint8_t* in, size_t size, std::string& out, size_t offset) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, kRawDeflate, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out.resize(offset + deflateBound(&z, static_cast<uLong>(size)));
  z.next_in = const_cast<Bytef*>(in);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data() + offset);
  z.avail_out = static_cast<uInt>(out.size() - offset);
  const bool ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
  out.resize(offset + z.total_out);
  deflateEnd(&z);
  return ok;
}

}  // namespace

bool inflate_raw(const uint8_t* in, size_t size, uint8_t* out, size_t out_size) {
  z_stream z{};
  // zlib's own state (its 32 KiB window) could not be allocated: memory, not the trace.
  if (const int init = inflateInit2(&z, kRawDeflate); init != Z_OK) {
    if (init == Z_MEM_ERROR) throw std::bad_alloc();
    return false;
  }
  z.next_in = const_cast<Bytef*>(in);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out;
  z.avail_out = static_cast<uInt>(out_size);
  const int result = inflate(&z, Z_FINISH);
  // Done only when the stream ends exactly at the end of both buffers.
  const bool ok = result == Z_STREAM_END && z.total_out == out_size && z.avail_in == 0;
  inflateEnd(&z);
  if (result == Z_MEM_ERROR) throw std::bad_alloc();
  return ok;
}

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
    const auto* raw = reinterpret_cast<const uint8_t*>(chunks.data() + pos + layout::kChunkHeaderBytes);
    packed.assign(4, '\0');
    layout::put_u32(packed.data(), payload);
    if (!deflate_raw(raw, payload, packed, 4) || packed.size() >= payload) {
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
