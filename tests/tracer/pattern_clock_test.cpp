// PatternClock and Recorder::count_pattern_steps: steps of a program without a step range,
// counted from its repeating collectives and host synchronisations.
#include <catch2/catch.hpp>

#include <vector>

#include "record_log.h"
#include "streamhaz/tracer/pattern_clock.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

namespace {

StepToken collective(uint64_t key) { return {key, false}; }
StepToken sync(uint64_t key) { return {key, true}; }

// Feeds `tokens` and returns the index of the token that found the pattern, or -1.
long fed_until_found(PatternClock& clock, const std::vector<StepToken>& tokens) {
  for (size_t i = 0; i < tokens.size(); ++i)
    if (clock.feed(tokens[i])) return long(i);
  return -1;
}

std::vector<StepToken> repeated(const std::vector<StepToken>& step, int times) {
  std::vector<StepToken> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), step.begin(), step.end());
  return out;
}

}  // namespace

TEST_CASE("pattern clock: found at the token that completes the wanted repeats") {
  const std::vector<StepToken> step = {collective(1), collective(2), collective(2), sync(9)};
  PatternClock clock(6);
  const long at = fed_until_found(clock, repeated(step, 10));
  CHECK(at == 6 * 4 - 1);
  CHECK(clock.period() == 4);
  CHECK_FALSE(clock.feed(step[0]));  // once only
}

TEST_CASE("pattern clock: an initialisation that does not repeat comes first") {
  std::vector<StepToken> tokens = {collective(5), sync(6), collective(7), sync(6), sync(8)};
  const size_t init = tokens.size();
  const std::vector<StepToken> step = {collective(1), sync(9), collective(3), sync(4)};
  for (const StepToken& t : repeated(step, 8)) tokens.push_back(t);
  PatternClock clock(3);
  CHECK(fed_until_found(clock, tokens) == long(init + 3 * 4 - 1));
  CHECK(clock.period() == 4);
}

TEST_CASE("pattern clock: one call repeated is no step") {
  // NCCL's set-up synchronises one stream dozens of times from one call site.
  PatternClock clock(3);
  CHECK(fed_until_found(clock, repeated({sync(4)}, 200)) == -1);
  // Nor a period whose calls hold no host synchronisation (a broadcast per layer).
  PatternClock no_sync(3);
  CHECK(fed_until_found(no_sync, repeated({collective(1), collective(2)}, 200)) == -1);
  // A one-call run, then a step of its own, is found at the step's repeats (the run's last call
  // looks like the step's: it is counted in).
  std::vector<StepToken> tokens = repeated({sync(4)}, 50);
  for (const StepToken& t : repeated({collective(1), sync(4)}, 3)) tokens.push_back(t);
  PatternClock after(3);
  CHECK(fed_until_found(after, tokens) == 49 + 3 * 2 - 1);
  CHECK(after.period() == 2);
}

TEST_CASE("pattern clock: a broken repeat starts the count again") {
  const std::vector<StepToken> step = {collective(1), sync(2)};
  std::vector<StepToken> tokens = repeated(step, 3);
  tokens.push_back(collective(77));  // an evaluation call, once
  const size_t restart = tokens.size();
  for (const StepToken& t : repeated(step, 5)) tokens.push_back(t);
  PatternClock clock(4);
  CHECK(fed_until_found(clock, tokens) == long(restart + 4 * 2 - 1));
}

TEST_CASE("pattern clock: the shortest period wins, and a step longer than the longest is not found") {
  PatternClock clock(2);
  CHECK(fed_until_found(clock, repeated({collective(1), sync(2)}, 4)) == 3);
  CHECK(clock.period() == 2);
  std::vector<StepToken> step;
  for (uint64_t k = 0; k < PatternClock::kMaxPeriod + 1; ++k) step.push_back(collective(100 + k));
  step.back() = sync(3);
  PatternClock too_long(2);
  CHECK(fed_until_found(too_long, repeated(step, 3)) == -1);
}

TEST_CASE("recorder: steps counted from the pattern are announced once, outside the lock") {
  RecordLog log;
  Recorder rec(log);
  rec.nccl_comm_initialized(0xc0, CommInfo{77, 0, 2});
  std::vector<std::pair<size_t, uint64_t>> found;
  rec.count_pattern_steps(3, [&](size_t period, uint64_t seq) {
    CHECK(rec.last_seq() == seq);  // takes the recorder's lock: not held here
    found.emplace_back(period, seq);
  });
  NcclCall all_reduce;
  all_reduce.comm = 0xc0;
  all_reduce.count = 1024;
  for (int step = 0; step < 5; ++step) {
    rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
    rec.nccl_call_begin(all_reduce);
    rec.nccl_call_end();
    rec.stream_synchronized(StreamRef{0, 0});
  }
  REQUIRE(found.size() == 1);
  CHECK(found[0].first == 2);
  // The third step's synchronisation completed three repeats.
  CHECK(found[0].second == log.all<StreamSync>()[2].seq);
}

TEST_CASE("recorder: a step range's first step ends the counting") {
  RecordLog log;
  Recorder rec(log);
  rec.set_step_range("step");
  int found = 0;
  rec.count_pattern_steps(2, [&](size_t, uint64_t) { ++found; });
  for (int step = 0; step < 4; ++step) {
    rec.nvtx_push("step");
    rec.event_synchronized(0xe);
    rec.device_synchronized(0);
    rec.nvtx_pop();
  }
  CHECK(found == 0);
  // Asked after a step began: never counts.
  rec.count_pattern_steps(2, [&](size_t, uint64_t) { ++found; });
  for (int step = 0; step < 4; ++step) {
    rec.event_synchronized(0xe);
    rec.device_synchronized(0);
  }
  CHECK(found == 0);
}

TEST_CASE("recorder: counting stopped unfound announces nothing") {
  RecordLog log;
  Recorder rec(log);
  int found = 0;
  rec.count_pattern_steps(2, [&](size_t, uint64_t) { ++found; });
  rec.stop_counting_pattern_steps();
  for (int step = 0; step < 4; ++step) {
    rec.event_synchronized(0xe);
    rec.device_synchronized(0);
  }
  CHECK(found == 0);
}
