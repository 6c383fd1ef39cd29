// Steps of a trace without a step range, from the repeating pattern of its collectives and host
// synchronisations (analyzer/src/replay/pattern_steps.h).
#include <catch2/catch.hpp>

#include "replay/pattern_steps.h"

using streamhaz::analysis::find_pattern_steps;
using streamhaz::analysis::PatternToken;

namespace {

// Tokens from letters: the letter is the call, '.' a host synchronisation; record i is letter i.
std::vector<PatternToken> tokens(const std::string& calls) {
  std::vector<PatternToken> out;
  for (size_t i = 0; i < calls.size(); ++i) out.push_back({i * 10, static_cast<uint64_t>(calls[i]), calls[i] == '.'});
  return out;
}

}  // namespace

TEST_CASE("pattern steps: the periodic tail after a set-up that does not repeat", "[pattern]") {
  // Set-up "xyz", then four steps of two collectives ending in a host sync.
  const auto steps = find_pattern_steps(tokens("xyzab.ab.ab.ab."));
  CHECK(steps.period == 3);
  // Each step starts right after the host sync that ended the one before; the first at its first call.
  CHECK(steps.starts == std::vector<uint64_t>{30, 51, 81, 111});
}

TEST_CASE("pattern steps: the longest cover wins over a shorter period of repeated sizes", "[pattern]") {
  // Seven flushes of one size and an epilogue of another per step (DeepSpeed's buckets): "a" alone
  // repeats too, but only within a step.
  const auto steps = find_pattern_steps(tokens("bbaaaaaaac.aaaaaaac.aaaaaaac."));
  CHECK(steps.period == 9);
  CHECK(steps.starts.size() == 3);
}

TEST_CASE("pattern steps: no period, or a single one, is no pattern", "[pattern]") {
  CHECK(find_pattern_steps(tokens("abcdefg")).period == 0);
  CHECK(find_pattern_steps(tokens("xab.")).period == 0);
  CHECK(find_pattern_steps(tokens("")).period == 0);
}

TEST_CASE("pattern steps: one call repeated is no step pattern, however long", "[pattern]") {
  // An initialisation's sixty identical synchronisations, then a few of other calls.
  CHECK(find_pattern_steps(tokens(std::string(60, '.') + "xyz")).period == 0);
  // With them before a loop, the loop is what is found.
  const auto steps = find_pattern_steps(tokens(std::string(60, '.') + "ab.ab.ab."));
  CHECK(steps.period == 3);
  CHECK(steps.starts.size() == 3);
}

TEST_CASE("pattern steps: a teardown after the loop is in no step", "[pattern]") {
  const auto steps = find_pattern_steps(tokens("xab.ab.ab.ab.zq"));
  CHECK(steps.period == 3);
  CHECK(steps.end == 121);  // the record after the last step's host sync (token 12, record 120)
  CHECK(steps.starts == std::vector<uint64_t>{10, 31, 61, 91});
}

TEST_CASE("pattern steps: a loop longer than the tokens looked at is followed back to its start", "[pattern]") {
  std::string calls = "xyz";
  for (int i = 0; i < 7000; ++i) calls += "ab.";  // 21,000 tokens of loop, more than the 16,384 looked at
  const auto steps = find_pattern_steps(tokens(calls));
  CHECK(steps.period == 3);
  REQUIRE(steps.starts.size() == 7000);
  CHECK(steps.starts.front() == 30);  // the loop's first call (token 3)
  CHECK(steps.starts[1] == 51);       // right after the first step's host sync (token 5, record 50)
}
