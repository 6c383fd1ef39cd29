#include <catch2/catch.hpp>

#include <vector>

#include "streamhaz/tracer/timing_policy.h"

using namespace streamhaz::tracer;
using std::chrono::milliseconds;

namespace {
TimingPolicy parsed(const char* text) {
  std::string why;
  auto p = parse_timing_policy(text, why);
  INFO(why);
  REQUIRE(p);
  return *p;
}

std::string rejection(const char* text) {
  std::string why;
  CHECK_FALSE(parse_timing_policy(text, why));
  return why;
}
}  // namespace

TEST_CASE("GPU-times modes are read from their names") {
  CHECK(parsed("all").mode == GpuTimes::All);
  CHECK(parsed("off").mode == GpuTimes::Off);
  CHECK(parsed("0").mode == GpuTimes::Off);
  TimingPolicy d = parsed("steps");
  CHECK(d.mode == GpuTimes::Steps);
  CHECK(d.describe() == TimingPolicy{}.describe());
  CHECK(parsed("sampled").describe() == "sampled:200/2000");
  TimingPolicy s = parsed("sampled:50/400");
  CHECK(s.window == milliseconds(50));
  CHECK(s.period == milliseconds(400));
  CHECK(s.describe() == "sampled:50/400");
  CHECK(parsed("sampled:10/86400000").period == milliseconds(86400000));
}

TEST_CASE("a GPU-times mode that cannot be read says why") {
  CHECK_THAT(rejection("sometimes"), Catch::Contains("'sometimes'"));
  CHECK_THAT(rejection("sampled:50"), Catch::Contains("WINDOW_MS/PERIOD_MS"));
  CHECK_THAT(rejection("sampled:50/x"), Catch::Contains("WINDOW_MS/PERIOD_MS"));
  CHECK_THAT(rejection("sampled:-5/100"), Catch::Contains("at least 10 ms"));
  CHECK_THAT(rejection("sampled:0/100"), Catch::Contains("at least 10 ms"));
  CHECK_THAT(rejection("sampled:9/100"), Catch::Contains("at least 10 ms"));
  CHECK_THAT(rejection("sampled:200/100"), Catch::Contains("no longer than its period"));
  // A period past a day would overflow the window thread's wait and spin it.
  CHECK_THAT(rejection("sampled:10/86400001"), Catch::Contains("a day"));
  CHECK_THAT(rejection("sampled:1/10000000000000"), Catch::Contains("a day"));
  CHECK_THAT(rejection("sampled:1/99999999999999999999999"), Catch::Contains("WINDOW_MS/PERIOD_MS"));
  CHECK_THAT(rejection(""), Catch::Contains("must be"));
}

TEST_CASE("sampled windows open at the start of every period") {
  TimingPolicy p = parsed("sampled:100/1000");
  CHECK(timing_window_open(p, milliseconds(0)));
  CHECK(timing_window_open(p, milliseconds(99)));
  CHECK_FALSE(timing_window_open(p, milliseconds(100)));
  CHECK_FALSE(timing_window_open(p, milliseconds(999)));
  CHECK(timing_window_open(p, milliseconds(1000)));
  CHECK(timing_window_open(p, milliseconds(5050)));
  CHECK(until_next_timing_change(p, milliseconds(0)) == milliseconds(100));
  CHECK(until_next_timing_change(p, milliseconds(40)) == milliseconds(60));
  CHECK(until_next_timing_change(p, milliseconds(100)) == milliseconds(900));
  CHECK(until_next_timing_change(p, milliseconds(1999)) == milliseconds(1));
  CHECK(timing_window_open(parsed("all"), milliseconds(123456)));
  CHECK_FALSE(timing_window_open(parsed("off"), milliseconds(0)));
}

TEST_CASE("a window as long as its period is no sampling: every operation is timed") {
  TimingPolicy p = parsed("sampled:300/300");
  CHECK(p.mode == GpuTimes::All);
  CHECK(p.describe() == "all");
  for (int ms = 0; ms < 2000; ms += 7) CHECK(timing_window_open(p, milliseconds(ms)));
}

TEST_CASE("steps: the warm-up step is not timed, the next K are, then one in N") {
  TimingPolicy p = parsed("steps:3/10");
  CHECK(p.mode == GpuTimes::Steps);
  CHECK(p.describe() == "steps:3/10");
  std::vector<int> timed;
  for (int i = 0; i < 40; ++i)
    if (step_timed(p, i)) timed.push_back(i);
  CHECK(timed == std::vector<int>{1, 2, 3, 13, 23, 33});
  // Collection stays on through the warm-up and the first K, then closes after each timed step.
  std::vector<int> closing;
  for (int i = 0; i < 40; ++i)
    if (closes_after_step(p, i) && step_timed(p, i)) closing.push_back(i);
  CHECK(closing == std::vector<int>{3, 13, 23, 33});
  CHECK_FALSE(closes_after_step(p, 0));
  CHECK_FALSE(closes_after_step(p, 2));
  // Before the first step collection is on from the start, for first_step_wait at most.
  CHECK(timing_window_open(p, milliseconds(0)));
  CHECK(timing_window_open(p, milliseconds(299999)));
  CHECK_FALSE(timing_window_open(p, milliseconds(300000)));
}

TEST_CASE("steps: by default the four steps after the warm-up are timed and nothing after") {
  // Switching CUPTI's activity on again costs for the rest of the run: the default never does.
  const TimingPolicy d = parsed("steps");
  CHECK(d.describe() == "steps:4");
  std::vector<int> timed;
  for (int i = 0; i < 1000; ++i)
    if (step_timed(d, i)) timed.push_back(i);
  CHECK(timed == std::vector<int>{1, 2, 3, 4});
  CHECK(closes_after_step(d, 4));
  CHECK_FALSE(closes_after_step(d, 3));
  const TimingPolicy k = parsed("steps:7");
  CHECK(k.timed_steps == 7);
  CHECK(k.then_every == 0);
  CHECK(k.describe() == "steps:7");
  CHECK(parsed("steps:4/50").describe() == "steps:4/50");
}

TEST_CASE("steps: malformed counts are refused with the form expected") {
  for (const char* bad : {"steps:", "steps:x", "steps:0", "steps:0/10", "steps:3/0", "steps:-1/5", "steps:3/x",
                          "steps:3/2000000", "steps:2000000", "steps:3/"})
    CHECK_THAT(rejection(bad), Catch::Contains("steps:K or steps:K/N"));
}
