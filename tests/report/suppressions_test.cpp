#include <sstream>

#include <catch2/catch.hpp>

#include "sample_findings.h"
#include "streamhaz/report/suppressions.h"

using namespace streamhaz::report;
using streamhaz::analysis::FindingKind;
using testing::sample_oversync;
using testing::sample_race;

namespace {

std::vector<SuppressionRule> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_suppressions(in, "test.supp");
}

SuppressionRule one(const std::string& line) {
  auto rules = parse(line);
  REQUIRE(rules.size() == 1);
  return rules[0];
}

// The message of the SuppressionError that parsing `text` throws ("" if none).
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const SuppressionError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("suppressions: the documented example line parses into its fields") {
  auto rule = one("race op:*ncclAllReduce* buffer:ipg_buffer* streams:compute stream,reduction stream");
  CHECK(rule.kind == FindingKind::Race);
  CHECK(rule.ops == std::vector<std::string>{"*ncclAllReduce*"});
  CHECK(rule.buffer == "ipg_buffer*");
  CHECK(rule.streams == std::vector<std::string>{"compute stream", "reduction stream"});
  CHECK(rule.origin.line == 1);
  CHECK(rule.origin.file == "test.supp");
}

TEST_CASE("suppressions: comments, blank lines and line numbers") {
  auto rules = parse("# header comment\n\n   \noversync key:oversync:*   # trailing comment\nrace buffer:x#1\n");
  REQUIRE(rules.size() == 2);
  CHECK(rules[0].kind == FindingKind::OverSync);
  CHECK(rules[0].key == "oversync:*");
  CHECK(rules[0].origin.line == 4);
  CHECK(rules[1].buffer == "x#1");  // '#' inside a name is not a comment
  CHECK(rules[1].origin.line == 5);
}

TEST_CASE("suppressions: C++ scopes in kernel names are not keys") {
  auto rule = one("op:void at::native::vectorized<float>(int) nvtx:*backward*");
  CHECK(rule.ops == std::vector<std::string>{"void at::native::vectorized<float>(int)"});
  CHECK(rule.nvtx == "*backward*");
  CHECK_FALSE(rule.kind.has_value());
}

TEST_CASE("suppressions: malformed lines name file and line") {
  CHECK_THAT(parse_error("race buffer:a\nrace colour:blue\n"),
             Catch::StartsWith("test.supp:2:") && Catch::Contains("unknown key 'colour:'"));
  CHECK_THAT(parse_error("racy buffer:a"), Catch::StartsWith("test.supp:1:") && Catch::Contains("'racy'"));
  CHECK_THAT(parse_error("just some words"), Catch::Contains("finding kind"));
  CHECK_THAT(parse_error("race buffer:"), Catch::Contains("no value"));
  CHECK_THAT(parse_error("race buffer:a buffer:b"), Catch::Contains("given twice"));
  CHECK_THAT(parse_error("race op:a op:b op:c"), Catch::Contains("at most two"));
  CHECK_THAT(parse_error("race streams:a,b,c"), Catch::Contains("one or two"));
  CHECK_THAT(parse_error("race streams:a,"), Catch::Contains("empty stream name"));
}

TEST_CASE("suppressions: a missing file is a SuppressionError naming it") {
  CHECK_THROWS_AS(load_suppressions("/nonexistent/streamhaz.supp"), SuppressionError);
}

TEST_CASE("suppressions: every given field must match") {
  auto race = sample_race();
  CHECK(rule_matches(one("race"), race));
  CHECK(rule_matches(one("*"), race));
  CHECK_FALSE(rule_matches(one("oversync"), race));
  CHECK(rule_matches(one("race op:*ncclAllReduce* buffer:ipg_buffer* streams:compute stream,reduction stream"), race));
  CHECK_FALSE(rule_matches(one("race op:*ncclAllReduce* buffer:other*"), race));
  CHECK_FALSE(rule_matches(one("race op:*ncclAllGather*"), race));
  CHECK(rule_matches(one("key:race:memcpy DtoD@*"), race));
  CHECK(rule_matches(one("nvtx:*average_tensor"), race));
  CHECK_FALSE(rule_matches(one("nvtx:forward"), race));
}

TEST_CASE("suppressions: stream and op pairs match in either order") {
  auto race = sample_race();  // first: reduction stream, second: compute stream
  CHECK(rule_matches(one("streams:reduction stream,compute stream"), race));
  CHECK(rule_matches(one("streams:compute stream,reduction stream"), race));
  CHECK(rule_matches(one("streams:compute*"), race));
  CHECK_FALSE(rule_matches(one("streams:compute stream,compute stream"), race));
  CHECK(rule_matches(one("op:memcpy* op:ncclAllReduce"), race));  // kind or name may match
  CHECK(rule_matches(one("op:ncclAllReduce op:cudaMemcpyAsync"), race));
  CHECK_FALSE(rule_matches(one("op:ncclAllReduce op:ncclAllReduce"), race));
}

TEST_CASE("suppressions: apply moves matched findings out and keeps the rule") {
  ReportInput input;
  input.analysis.findings = {sample_race(), sample_oversync(), sample_race()};
  apply_suppressions(parse("# ok\nrace buffer:ipg_buffer[0]\n"), input);
  REQUIRE(input.analysis.findings.size() == 1);
  CHECK(input.analysis.findings[0].kind == FindingKind::OverSync);
  REQUIRE(input.suppressed.size() == 2);
  CHECK(input.suppressed[0].rule.line == 2);
  CHECK(input.suppressed[0].rule.text == "race buffer:ipg_buffer[0]");
}
