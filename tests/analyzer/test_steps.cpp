// Training steps from NVTX ranges (analyzer/src/replay/steps.h): instances of the outermost range,
// told apart by its first sub-range, whatever ranges a framework opens inside it.
#include <catch2/catch.hpp>

#include "replay/steps.h"
#include "streamhaz/trace/range_path.h"
#include "scenario.h"

using namespace streamhaz::testing;

namespace {

// `iterations` steps shaped like DeepSpeed's: the script's range "step" around forward, backward
// and the engine's own "step", each with ranges of their own that come and go several times.
std::vector<streamhaz::trace::Record> deepspeed_like(int iterations, bool op_outside_between, bool edges) {
  TraceBuilder run(1);
  RankTraceBuilder& r = run.rank(0);
  r.set_range_edges(edges);
  const StreamId s = r.stream("compute");
  const uint64_t buf = r.alloc(4096);
  for (int i = 0; i < iterations; ++i) {
    r.push_range("step");
    r.push_range("forward");
    r.memset(s, buf, 64);
    for (int layer = 0; layer < 3; ++layer) {  // sub-ranges that come back within the forward
      r.push_range("linear");
      r.memset(s, buf, 64);
      r.pop_range();
      r.memset(s, buf, 64);
    }
    r.pop_range();
    r.push_range("backward");
    r.push_range("average_tensor");
    r.memset(s, buf, 64);
    r.pop_range();
    r.pop_range();
    r.push_range("step");  // the engine's own range named like the script's
    r.memset(s, buf, 64);
    r.pop_range();
    r.pop_range();
    if (op_outside_between) r.memset(s, buf, 64);
  }
  return r.records();
}

}  // namespace

TEST_CASE("steps: nested ranges a framework opens inside a step start no instance", "[replay][steps]") {
  for (bool outside : {false, true})
  for (bool edges : {false, true}) {
    CAPTURE(outside, edges);
    const auto steps = streamhaz::analysis::find_steps(deepspeed_like(10, outside, edges), "step");
    REQUIRE(steps.size() == 10);
    for (const auto& s : steps) CHECK(s.size() == 9);  // 7 in the forward, 1 backward, 1 engine step
  }
}

TEST_CASE("steps: a range found deeper in the path (under a framework's root range)", "[replay][steps]") {
  for (bool edges : {false, true}) {
  CAPTURE(edges);
  TraceBuilder run(1);
  RankTraceBuilder& r = run.rank(0);
  r.set_range_edges(edges);
  const StreamId s = r.stream("compute");
  const uint64_t buf = r.alloc(4096);
  r.push_range("train");
  for (int i = 0; i < 3; ++i) {
    r.push_range("step");
    r.memset(s, buf, 64);
    r.push_range("optimizer");
    r.memset(s, buf, 64);
    r.pop_range();
    r.pop_range();
  }
  r.pop_range();
  const auto steps = streamhaz::analysis::find_steps(r.records(), "step");
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].size() == 2);
  }
}

TEST_CASE("steps: steps with no sub-range are told apart by their range edges", "[replay][steps]") {
  // A training loop whose step issues its work in the range itself: the operations' paths are all
  // "step", so only the push and pop records (format version 5) show where one ends.
  for (bool edges : {false, true}) {
    CAPTURE(edges);
    TraceBuilder run(1);
    RankTraceBuilder& r = run.rank(0);
    r.set_range_edges(edges);
    const StreamId s = r.stream("compute");
    const uint64_t buf = r.alloc(4096);
    for (int i = 0; i < 4; ++i) {
      r.push_range("step");
      r.memset(s, buf, 64);
      r.memset(s, buf, 64);
      r.pop_range();
    }
    const auto steps = streamhaz::analysis::find_steps(r.records(), "step");
    // Without edges the four instances are one: nothing in the paths separates them.
    REQUIRE(steps.size() == (edges ? 4u : 1u));
    CHECK(steps[0].size() == (edges ? 2u : 8u));
  }
}

TEST_CASE("steps: with range edges, every call between push and pop belongs to the step", "[replay][steps]") {
  TraceBuilder run(1);
  RankTraceBuilder& r = run.rank(0);
  const StreamId s = r.stream("compute");
  const uint64_t buf = r.alloc(4096);
  r.memset(s, buf, 64);  // before any step
  r.push_range("step");
  r.memset(s, buf, 64);
  r.stream_sync(s);
  r.pop_range();
  r.memset(s, buf, 64);  // between steps
  streamhaz::analysis::StepFinder finder("step");
  std::vector<int> of_calls;
  for (const auto& rec : r.records())
    if (streamhaz::trace::op_common(rec) || std::holds_alternative<streamhaz::trace::RangeEdge>(rec) ||
        std::holds_alternative<streamhaz::trace::StreamSync>(rec))
      of_calls.push_back(finder.feed(rec));
    else
      finder.feed(rec);
  // memset, push, memset, sync, pop, memset
  CHECK(of_calls == std::vector<int>{-1, 0, 0, 0, 0, -1});
  CHECK(finder.steps() == 1);
  CHECK(finder.range_edges());
}

TEST_CASE("steps: a step range of alternatives and prefixes (PyTorch profiler's ProfilerStep#N)", "[replay][steps]") {
  for (bool edges : {true, false}) {
    TraceBuilder run(1);
    RankTraceBuilder& r = run.rank(0);
    r.set_range_edges(edges);
    const StreamId s = r.stream("compute");
    const uint64_t buf = r.alloc(4096);
    for (int i = 0; i < 3; ++i) {
      r.push_range("ProfilerStep#" + std::to_string(i + 7));
      r.push_range("forward");
      r.memset(s, buf, 64);
      r.pop_range();
      r.pop_range();
    }
    CAPTURE(edges);
    CHECK(streamhaz::analysis::find_steps(r.records(), "step|ProfilerStep#*").size() == 3);
    CHECK(streamhaz::analysis::find_steps(r.records(), "ProfilerStep#*").size() == 3);
    CHECK(streamhaz::analysis::find_steps(r.records(), "ProfilerStep#").empty());  // a whole name
    CHECK(streamhaz::analysis::find_steps(r.records(), "step").empty());
  }
  CHECK(streamhaz::trace::range_name_matches("ProfilerStep#3", "step|ProfilerStep#*"));
  CHECK(streamhaz::trace::range_name_matches("step", "step|ProfilerStep#*"));
  CHECK_FALSE(streamhaz::trace::range_name_matches("steps", "step|ProfilerStep#*"));
  CHECK_FALSE(streamhaz::trace::range_name_matches("Profiler", "ProfilerStep#*"));
}
