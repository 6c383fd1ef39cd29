// Compressed chunks (format version 4): written by TraceFileWriter and the tracer, read back
// record for record, mixed freely with raw chunks, and refused with one error when damaged.
#include <catch2/catch.hpp>

#include <zlib.h>

#include "sample_records.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/writer.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;

namespace {

uint32_t u32_at(const std::string& b, size_t at) {
  return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8 | uint32_t(uint8_t(b[at + 2])) << 16 |
         uint32_t(uint8_t(b[at + 3])) << 24;
}
void put_u32_at(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = char((v >> (8 * i)) & 0xff);
}

// Raw chunks of the records, `chunk_bytes` of payload each, after a file header.
std::string raw_trace(const std::vector<Record>& records, std::string* chunks_only, size_t chunk_bytes = 400) {
  std::string chunks;
  ChunkEncoder chunk;
  for (const Record& r : records) {
    chunk.add(r);
    if (chunk.payload_bytes() >= chunk_bytes) chunk.finish_into(chunks);
  }
  chunk.add(End{records.size()});
  chunk.finish_into(chunks);
  if (chunks_only) *chunks_only = chunks;
  return encode_file_header(test_header()) + chunks;
}

std::string message_of(const std::string& path) {
  try {
    read_all(path);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("compressed chunks read back record for record, and smaller", "[format][compression]") {
  const std::vector<Record> records = many_records(3000);
  std::string chunks;
  raw_trace(records, &chunks, 64 * 1024);  // the tracer's chunk size
  std::string packed;
  compress_chunks(chunks, packed);
  CHECK(packed.size() * 2 < chunks.size());
  const std::string path = temp_path("compressed.shz");
  write_file(path, encode_file_header(test_header()) + packed);
  const std::vector<Record> back = read_all(path);
  REQUIRE(back.size() == records.size() + 1);
  for (size_t i = 0; i < records.size(); ++i) CHECK(back[i] == records[i]);

  // TraceFileWriter compresses too.
  const std::string written = temp_path("written.shz");
  {
    TraceFileWriter w(written, test_header(), TraceFileWriter::Options{.chunk_bytes = 4096, .overwrite = true});
    for (const Record& r : records) w.add(r);
  }
  CHECK(read_file(written).find("SHZZ") != std::string::npos);
  CHECK(read_all(written).size() == records.size() + 1);
}

TEST_CASE("raw and compressed chunks mix in one file", "[format][compression]") {
  const std::vector<Record> records = many_records(600);
  std::string chunks;
  raw_trace(records, &chunks);
  // Compress every other chunk: the reader takes each as it comes.
  std::string mixed;
  size_t pos = 0;
  for (int i = 0; pos < chunks.size(); ++i) {
    const size_t whole = 16 + u32_at(chunks, pos + 4);
    if (i % 2) compress_chunks(std::string_view(chunks).substr(pos, whole), mixed);
    else mixed.append(chunks, pos, whole);
    pos += whole;
  }
  const std::string path = temp_path("mixed.shz");
  write_file(path, encode_file_header(test_header()) + mixed);
  CHECK(read_all(path).size() == records.size() + 1);
}

TEST_CASE("a damaged compressed chunk is one error naming the chunk", "[format][compression]") {
  std::string chunks;
  raw_trace(many_records(200), &chunks);
  std::string packed;
  compress_chunks(std::string_view(chunks).substr(0, 16 + u32_at(chunks, 4)), packed);
  REQUIRE(u32_at(packed, 0) == 0x5a5a4853);  // SHZZ
  const std::string head = encode_file_header(test_header());
  // Re-seal the stored bytes with a fresh CRC, so the inflate step is what catches the damage.
  auto sealed = [&](std::string c) {
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(c.data() + 16), uInt(c.size() - 16));
    put_u32_at(c, 12, uint32_t(crc));
    return head + c;
  };
  const std::string path = temp_path("damaged.shz");

  std::string wrong_length = packed;
  put_u32_at(wrong_length, 16, u32_at(packed, 16) + 1);  // the stated raw length
  write_file(path, sealed(wrong_length));
  CHECK_THAT(message_of(path), Catch::Contains("does not inflate to its stated"));

  std::string huge = packed;
  put_u32_at(huge, 16, 100u << 20);
  write_file(path, sealed(huge));
  CHECK_THAT(message_of(path), Catch::Contains("over the 64 MiB limit"));

  std::string garbage = packed;
  for (size_t i = 24; i < garbage.size(); ++i) garbage[i] = char(garbage[i] ^ 0x5a);
  write_file(path, sealed(garbage));
  CHECK_THAT(message_of(path), Catch::Contains("does not inflate"));

  std::string flipped = packed;
  flipped[flipped.size() - 1] ^= 1;  // without a new CRC: the checksum catches it first
  write_file(path, head + flipped);
  CHECK_THAT(message_of(path), Catch::Contains("checksum mismatch"));
}
