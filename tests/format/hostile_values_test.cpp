// Values inside a well-formed trace that must not reach the verbs as they are (issue 27): a
// header key of the wrong JSON type, names of many MB, a meta record larger than a header may
// be, a last chunk whose length field was hit by a bit flip.
#include <catch2/catch.hpp>

#include "sample_records.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/writer.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;

namespace {

void read_everything(const std::string& path) {
  TraceReader reader(path);
  Record r;
  while (reader.next(r)) {
  }
}

// A trace with `header` and one chunk of `records`, cleanly ended.
std::string write_trace(const std::string& name, const nlohmann::json& header, const std::vector<Record>& records) {
  const std::string path = temp_path(name);
  TraceFileWriter w(path, header, {});
  for (const Record& r : records) w.add(r);
  return path;
}

}  // namespace

TEST_CASE("a header whose format or version has the wrong JSON type is refused with the offset",
          "[format][hostile]") {
  nlohmann::json h = test_header();
  h["format"] = 7;
  CHECK_THROWS_WITH(TraceReader(write_trace("format-type.shz", h, {})),
                    Catch::Contains("at byte 16") && Catch::Contains("\"format\": \"streamhaz-trace\""));
  h = test_header();
  h["version"] = "4";
  CHECK_THROWS_WITH(TraceReader(write_trace("version-type.shz", h, {})),
                    Catch::Contains("at byte 16") && Catch::Contains("\"version\" that is not a whole number"));
  // A meta record is merged into the header: the same keys, the same check.
  CHECK_THROWS_WITH(read_everything(write_trace("meta-version.shz", test_header(), {Meta{"{\"version\": [4]}"}})),
                    Catch::Contains("meta record has a \"version\" that is not a whole number"));
}

TEST_CASE("names longer than 64 KiB keep their first 64 KiB, and the reader counts them", "[format][hostile]") {
  const std::string long_name(kMaxStringBytes + 1000, 'n');
  const std::string path = write_trace("long-name.shz", test_header(),
                                       {StringDef{1, long_name}, StringDef{2, std::string(kMaxStringBytes, 'k')}});
  TraceReader reader(path);
  Record r;
  REQUIRE(reader.next(r));
  CHECK(std::get<StringDef>(r).text == long_name.substr(0, kMaxStringBytes));
  REQUIRE(reader.next(r));
  CHECK(std::get<StringDef>(r).text.size() == kMaxStringBytes);  // at the limit: kept whole
  while (reader.next(r)) {
  }
  CHECK(reader.strings_cut() == 1);
  CHECK_THAT(reader.strings_cut_note(), Catch::Contains("1 string(s) longer than 64 KiB"));
}

TEST_CASE("a meta record larger than the header limit is refused", "[format][hostile]") {
  const std::string json = "{\"x\": \"" + std::string(1u << 20, 'm') + "\"}";
  CHECK_THROWS_WITH(read_everything(write_trace("big-meta.shz", test_header(), {Meta{json}})),
                    Catch::Contains("exceeds the 1 MiB header limit"));
}

TEST_CASE("a bit flip that lengthens the last chunk is corruption, not truncation", "[format][hostile]") {
  const std::string path = temp_path("last-length.shz");
  TraceFileWriter::Options o;
  o.chunk_bytes = 200;
  {
    TraceFileWriter w(path, test_header(), o);
    for (const Record& r : many_records(100)) w.add(r);
  }
  std::string bytes = read_file(path);
  auto u32_at = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | uint8_t(bytes[at + i]);
    return v;
  };
  size_t last = 16 + u32_at(12);
  while (last + 16 + u32_at(last + 4) < bytes.size()) last += 16 + u32_at(last + 4);
  REQUIRE(last + 16 + u32_at(last + 4) == bytes.size());
  bytes[last + 4 + 1] ^= 0x10;  // +4096 bytes: past the end of the file
  write_file(path, bytes);
  CHECK_THROWS_WITH(read_everything(path), Catch::Contains("at byte " + std::to_string(last + 4)) &&
                                               Catch::Contains("the length field is corrupt"));

  // Cut inside that chunk instead, it is a truncated trace as before.
  bytes = read_file(path);
  bytes[last + 4 + 1] ^= 0x10;
  write_file(path, bytes.substr(0, bytes.size() - 3));
  TraceReader reader(path);
  Record r;
  while (reader.next(r)) {
  }
  CHECK(reader.truncated());
}
