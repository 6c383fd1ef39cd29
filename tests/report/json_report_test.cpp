#include <sstream>

#include <catch2/catch.hpp>

#include "sample_findings.h"
#include "streamhaz/report/json_report.h"

using namespace streamhaz::report;
using json = nlohmann::ordered_json;

TEST_CASE("json: top level carries the schema version, summary and traces") {
  json doc = json_report(testing::sample_input());
  CHECK(doc["schema_version"] == kJsonSchemaVersion);
  CHECK(doc["tool"]["name"] == "streamhaz");
  CHECK(doc["summary"]["findings"] == 2);
  CHECK(doc["summary"]["races"] == 1);
  CHECK(doc["summary"]["oversync"] == 1);
  CHECK(doc["summary"]["suppressed"] == 1);
  CHECK(doc["summary"]["operations_checked"] == 238);
  REQUIRE(doc["traces"].size() == 2);
  CHECK(doc["traces"][1]["truncated"] == true);
  CHECK(doc["warnings"].size() == 1);
}

TEST_CASE("json: a finding keeps every field of the analysis") {
  json f = json_report(testing::sample_input())["findings"][0];
  CHECK(f["kind"] == "race");
  CHECK(f["key"] == testing::sample_race().key);
  CHECK(f["first"]["stream_name"] == "reduction stream");
  CHECK(f["first"]["role"] == "read-write");
  CHECK(f["first"]["nvtx"] == "step/average_tensor");
  CHECK(f["second"]["name"] == "cudaMemcpyAsync");
  CHECK(f["second"]["role"] == "write");
  CHECK(f["buffer"]["alloc_base"] == "0x7f0000000000");  // a string: no precision loss in readers
  CHECK(f["buffer"]["offset"] == 256);
  CHECK(f["buffer"]["bytes"] == 4096);
  CHECK(f["occurrences"] == 12);
  CHECK(f["ranks"] == json::array({0, 1}));
  CHECK(f["tier"] == "api");
  CHECK(f["exact"] == true);
}

TEST_CASE("json: suppressed findings say which rule hid them") {
  json s = json_report(testing::sample_input())["suppressed"];
  REQUIRE(s.size() == 1);
  CHECK(s[0]["buffer"]["name"] == "scratch");
  CHECK(s[0]["suppressed_by"] == json{{"file", "known.supp"}, {"line", 3}, {"rule", "race buffer:scratch"}});
}

TEST_CASE("json: names with quotes, templates and control characters round-trip") {
  std::ostringstream out;
  write_json_report(out, testing::sample_input());
  json back = json::parse(out.str());
  CHECK(back["findings"][1]["first"]["name"] == "void scale<float, \"q\">(float*, int)\nEVIL");
}

TEST_CASE("json: invalid UTF-8 from a trace does not abort the report") {
  ReportInput in;
  in.analysis.findings = {testing::sample_race()};
  in.analysis.findings[0].first.name = "bad\xff\xfe name";
  std::ostringstream out;
  REQUIRE_NOTHROW(write_json_report(out, in));
  CHECK_NOTHROW(json::parse(out.str()));
}
