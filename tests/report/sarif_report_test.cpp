#include <catch2/catch.hpp>

#include "sample_findings.h"
#include "streamhaz/report/sarif_report.h"

using namespace streamhaz::report;
using json = nlohmann::ordered_json;

namespace {
json sample_run() { return sarif_report(testing::sample_input())["runs"][0]; }
}  // namespace

TEST_CASE("sarif: a 2.1.0 log with one rule per finding kind") {
  json log = sarif_report(testing::sample_input());
  CHECK(log["version"] == "2.1.0");
  CHECK_THAT(log["$schema"].get<std::string>(), Catch::Contains("sarif-schema-2.1.0.json"));
  json rules = log["runs"][0]["tool"]["driver"]["rules"];
  REQUIRE(rules.size() == 3);
  CHECK(rules[0]["id"] == "race");
  CHECK(rules[0]["defaultConfiguration"]["level"] == "error");
  CHECK(rules[1]["id"] == "oversync");
  CHECK(rules[2]["id"] == "possible-race");
  CHECK(rules[2]["defaultConfiguration"]["level"] == "warning");
}

TEST_CASE("sarif: results point at their rule and carry the finding key as fingerprint") {
  json run = sample_run();
  json results = run["results"];
  REQUIRE(results.size() == 3);  // two reported, one suppressed
  for (const json& r : results) {
    CHECK(run["tool"]["driver"]["rules"][r["ruleIndex"].get<size_t>()]["id"] == r["ruleId"]);
    CHECK(r["partialFingerprints"].contains("streamhazFindingKey/v1"));
  }
  CHECK(results[0]["level"] == "error");
  CHECK(results[0]["partialFingerprints"]["streamhazFindingKey/v1"] == testing::sample_race().key);
  CHECK(results[0]["occurrenceCount"] == 12);
  CHECK_THAT(results[0]["message"]["text"].get<std::string>(),
             Catch::Contains("memcpy DtoD cudaMemcpyAsync (write) on compute stream, rank 0") &&
                 Catch::Contains("is not ordered after ncclAllReduce (read-write) on reduction stream") &&
                 Catch::Contains("Missing order: cudaStreamWaitEvent"));
}

TEST_CASE("sarif: the later operation is the location, the earlier one related") {
  json r = sample_run()["results"][0];
  json loc = r["locations"][0];
  CHECK(loc["logicalLocations"][0]["name"] == "cudaMemcpyAsync");
  CHECK(loc["logicalLocations"][0]["fullyQualifiedName"] == "rank 0/compute stream/cudaMemcpyAsync");
  CHECK(loc["physicalLocation"]["artifactLocation"]["uri"] == "traces/zero2%20run/rank0.shz");
  CHECK(loc["physicalLocation"]["artifactLocation"]["index"] == 0);
  REQUIRE(r["relatedLocations"].size() == 1);
  CHECK(r["relatedLocations"][0]["logicalLocations"][0]["name"] == "ncclAllReduce");
}

TEST_CASE("sarif: trace files are artifacts, warnings are notifications") {
  json run = sample_run();
  REQUIRE(run["artifacts"].size() == 2);
  CHECK(run["artifacts"][1]["location"]["uri"] == "traces/zero2%20run/rank1.shz");
  json notes = run["invocations"][0]["toolExecutionNotifications"];
  REQUIRE(notes.size() == 1);
  CHECK(notes[0]["level"] == "warning");
}

TEST_CASE("sarif: suppressed findings stay in the log, marked external") {
  json r = sample_run()["results"][2];
  REQUIRE(r["suppressions"].size() == 1);
  CHECK(r["suppressions"][0]["kind"] == "external");
  CHECK(r["suppressions"][0]["justification"] == "known.supp:3: race buffer:scratch");
  CHECK_FALSE(sample_run()["results"][0].contains("suppressions"));
}

TEST_CASE("sarif: over-synchronisation is a warning on the oversync rule") {
  json r = sample_run()["results"][1];
  CHECK(r["ruleId"] == "oversync");
  CHECK(r["level"] == "warning");
}
