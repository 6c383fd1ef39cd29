// Byte layout constants of a trace file (docs/trace-format.md).
#pragma once

#include <cstdint>

namespace streamhaz::trace::layout {

inline constexpr char kFileMagic[8] = {'S', 'H', 'Z', 'T', 'R', 'A', 'C', 'E'};
inline constexpr uint32_t kChunkMagic = 0x435a4853;  // "SHZC" little-endian
// A compressed chunk (version 4): the same header, the payload stored as u32 raw length + zlib.
inline constexpr uint32_t kCompressedChunkMagic = 0x5a5a4853;  // "SHZZ" little-endian
inline constexpr size_t kFilePreambleBytes = 16;     // magic, version, header length
inline constexpr size_t kChunkHeaderBytes = 16;      // magic, payload bytes, records, crc32
inline constexpr uint32_t kMaxHeaderBytes = 1u << 20;
inline constexpr uint32_t kMaxChunkPayloadBytes = 64u << 20;

inline void put_u32(char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
inline uint32_t get_u32(const uint8_t* in) {
  return uint32_t(in[0]) | uint32_t(in[1]) << 8 | uint32_t(in[2]) << 16 | uint32_t(in[3]) << 24;
}

}  // namespace streamhaz::trace::layout
