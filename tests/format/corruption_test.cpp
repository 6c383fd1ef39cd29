// Corrupt or foreign input gives one TraceError naming the file, the byte offset and what
// was expected; it never crashes.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <zlib.h>

#include <random>

#include "sample_records.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/writer.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;

namespace {

std::string good_trace_bytes(const std::string& path) {
  TraceFileWriter::Options o;
  o.chunk_bytes = 200;
  {
    TraceFileWriter w(path, test_header(), o);
    for (const Record& r : many_records(200)) w.add(r);
  }
  return read_file(path);
}

void read_everything(const std::string& path) {
  TraceReader reader(path);
  Record r;
  while (reader.next(r)) {
  }
}

}  // namespace

TEST_CASE("foreign files are rejected at byte 0", "[format][corruption]") {
  std::string path = temp_path("foreign.shz");
  write_file(path, "{\"this\": \"is json, not a trace\"}\n");
  CHECK_THROWS_WITH(TraceReader(path), Catch::Contains(path) && Catch::Contains("at byte 0") &&
                                           Catch::Contains("expected magic SHZTRACE"));
  write_file(path, "");
  CHECK_THROWS_WITH(TraceReader(path), Catch::Contains("16-byte streamhaz trace preamble"));
  CHECK_THROWS_WITH(TraceReader(temp_path("missing.shz")), Catch::Contains("cannot open"));
}

TEST_CASE("a newer format version is refused", "[format][corruption]") {
  std::string path = temp_path("version.shz");
  std::string bytes = good_trace_bytes(path);
  bytes[8] = 99;
  write_file(path, bytes);
  CHECK_THROWS_WITH(TraceReader(path), Catch::Contains("at byte 8") && Catch::Contains("version 99"));
}

TEST_CASE("a header that is not the trace JSON is refused", "[format][corruption]") {
  std::string path = temp_path("header.shz");
  std::string bytes = good_trace_bytes(path);
  bytes[16] = '[';
  write_file(path, bytes);
  CHECK_THROWS_WITH(TraceReader(path), Catch::Contains("at byte 16") && Catch::Contains("header"));
}

TEST_CASE("deeply nested header or meta JSON is refused", "[format][corruption]") {
  // Copying a 200000-deep JSON value recurses once per level: `inspect` overflowed the stack.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  std::string path = temp_path("deep_header.shz");
  const std::string header = "{\"format\": \"streamhaz-trace\", \"x\": " + deep + "}";
  std::string bytes = "SHZTRACE";
  for (uint32_t v : {1u, static_cast<uint32_t>(header.size())})
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  write_file(path, bytes + header);
  CHECK_THROWS_WITH(TraceReader(path), Catch::Contains("at byte 16") && Catch::Contains("nests deeper"));

  path = temp_path("deep_meta.shz");
  {
    TraceFileWriter w(path, test_header(), {});
    w.add(Meta{"{\"x\": " + deep + "}"});
  }
  CHECK_THROWS_WITH(read_everything(path), Catch::Contains("meta record JSON nests deeper"));
}

TEST_CASE("a flipped payload byte fails the chunk checksum", "[format][corruption]") {
  std::string path = temp_path("flip.shz");
  std::string bytes = good_trace_bytes(path);
  size_t header_end = 16 + (uint8_t(bytes[12]) | uint8_t(bytes[13]) << 8);
  size_t target = header_end + 16 + 5;  // in the first chunk's payload
  bytes[target] ^= 0x40;
  write_file(path, bytes);
  CHECK_THROWS_WITH(read_everything(path), Catch::Contains("checksum mismatch") &&
                                               Catch::Contains("at byte " + std::to_string(header_end + 16)));
}

TEST_CASE("a damaged chunk magic is reported where it is", "[format][corruption]") {
  std::string path = temp_path("magic.shz");
  std::string bytes = good_trace_bytes(path);
  size_t header_end = 16 + (uint8_t(bytes[12]) | uint8_t(bytes[13]) << 8);
  bytes[header_end] = 'X';
  write_file(path, bytes);
  CHECK_THROWS_WITH(read_everything(path), Catch::Contains("at byte " + std::to_string(header_end)) &&
                                               Catch::Contains("expected chunk magic"));
}

TEST_CASE("bytes after the end record are an error", "[format][corruption]") {
  std::string path = temp_path("trailing.shz");
  std::string bytes = good_trace_bytes(path) + "garbage after the end";
  write_file(path, bytes);
  CHECK_THROWS_WITH(read_everything(path), Catch::Contains("after the end record"));
}

namespace {
// A chunk around `payload` with a correct checksum, so only the decoder can object.
std::string chunk_with_valid_checksum(const std::string& payload, uint32_t records) {
  auto u32 = [](uint32_t v) { return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)}; };
  uint32_t crc = uint32_t(crc32(0L, reinterpret_cast<const Bytef*>(payload.data()), uInt(payload.size())));
  return u32(0x435a4853) + u32(uint32_t(payload.size())) + u32(records) + u32(crc) + payload;
}
}  // namespace

TEST_CASE("records that do not decode are errors naming the record's offset", "[format][corruption]") {
  std::string path = temp_path("undecodable.shz");
  std::string header = encode_file_header(test_header());
  size_t payload_at = header.size() + 16;
  SECTION("unknown record tag") {
    write_file(path, header + chunk_with_valid_checksum(std::string("\xc8\x01", 2), 1));
    CHECK_THROWS_WITH(read_everything(path), Catch::Contains("unknown record tag 200") &&
                                                 Catch::Contains("at byte " + std::to_string(payload_at)));
  }
  SECTION("string longer than its chunk") {
    // StringDef (tag 1): id 1, length 100, but only 2 bytes follow.
    write_file(path, header + chunk_with_valid_checksum(std::string("\x01\x01\x64" "ab", 5), 1));
    CHECK_THROWS_WITH(read_everything(path), Catch::Contains("runs past the end of its chunk"));
  }
  SECTION("enum out of range") {
    // Alloc (tag 19): seq, ptr, bytes, device, kind 9 (no such AllocKind), stream.
    write_file(path, header + chunk_with_valid_checksum(std::string("\x13\x02\x02\x01\x00\x09\x00", 7), 1));
    CHECK_THROWS_WITH(read_everything(path), Catch::Contains("enum value 9 out of range"));
  }
  SECTION("stray bytes after the last record") {
    write_file(path, header + chunk_with_valid_checksum(std::string("\x03\x05\x00\x00", 4), 1));
    CHECK_THROWS_WITH(read_everything(path), Catch::Contains("stray bytes"));
  }
  SECTION("overlong varint") {
    write_file(path, header + chunk_with_valid_checksum(std::string("\x03") + std::string(11, char(0x80)), 1));
    CHECK_THROWS_WITH(read_everything(path), Catch::Contains("varint longer than 10 bytes"));
  }
}

TEST_CASE("random byte damage never crashes the reader", "[format][corruption]") {
  std::string path = temp_path("random.shz");
  std::string good = good_trace_bytes(path);
  std::mt19937 rng(1234);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = good;
    int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = char(rng());
    if (rng() % 3 == 0) bytes.resize(rng() % bytes.size());
    write_file(path, bytes);
    try {
      read_everything(path);
    } catch (const TraceError&) {
      // expected for most damage
    }
  }
  SUCCEED("2000 damaged files read without a crash");
}

TEST_CASE("rejected files are closed (found by the fuzzer: a bad header leaked the file)", "[format][corruption]") {
  std::string path = temp_path("foreign-many.shz");
  write_file(path, "not a trace, and long enough to have a preamble");
  // Fewer open files allowed than attempts, so a leak shows as "cannot open".
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
  rlimit low = saved;
  low.rlim_cur = 256;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
  int failures = 0;
  for (int i = 0; i < 1000; ++i) {
    try {
      TraceReader reader(path);
    } catch (const TraceError& e) {
      failures += std::string(e.what()).find("expected magic SHZTRACE") == std::string::npos;
    }
  }
  setrlimit(RLIMIT_NOFILE, &saved);
  CHECK(failures == 0);
}
