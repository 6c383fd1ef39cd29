// Values inside a well-formed trace that must not reach the verbs as they are (issue 27): a
// header key of the wrong JSON type, names of many MB, a meta record larger than a header may
// be.
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
