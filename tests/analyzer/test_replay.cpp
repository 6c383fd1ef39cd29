// Replay on synthetic traces: TraceBuilder simulates GPU times with simple rules (every API
// call takes 1 µs of host time, an operation starts once its stream is free, its events have
// fired and the host issued it), so each expected step time below is worked out by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scenario.h"
#include "streamhaz/analysis/replay.h"

namespace streamhaz::testing {
namespace {

using analysis::Replayer;
using analysis::WhatIf;

int64_t step_with(const Replayer& r, const std::vector<analysis::RankRecords>& run, const std::string& spec) {
  WhatIf w;
  analysis::parse_what_if(spec, w);
  return r.run(analysis::apply_edits(run, w), w.scales).step_ns;
}

constexpr int64_t us = 1000;

// The reduction stream's kernel B, an event recorded after it, the compute stream's A, a wait for
// the event, D: D waits for B.
struct WaitedReduction {
  StreamId compute, reduction;
  uint64_t b, a, d;
};
WaitedReduction waited_reduction(RankTraceBuilder& r0) {
  WaitedReduction w;
  w.compute = r0.stream("compute");
  w.reduction = r0.stream("reduction");
  const EventId e = r0.event();
  w.b = r0.kernel(w.reduction, "B", {}, 100);
  r0.record(e, w.reduction);
  w.a = r0.kernel(w.compute, "A", {}, 10);
  r0.wait(w.compute, e);
  w.d = r0.kernel(w.compute, "D", {}, 10);
  return w;
}

}  // namespace

TEST_CASE("replay: one stream replays exactly, and a scaled stream doubles its kernels", "[replay]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId s = r0.stream("compute stream");  // host 1 µs
  for (int i = 0; i < 3; ++i) r0.kernel(s, "k", {}, 10);  // 2..12, 12..22, 22..32
  const auto records = load(run);
  const Replayer replay(records);
  CHECK(replay.measured().step_ns == 30 * us);  // no step range: the whole run
  CHECK(replay.run_unchanged().step_ns == 30 * us);
  CHECK(step_with(replay, records, "scale stream=\"compute stream\" factor=2") == 60 * us);
  CHECK(step_with(replay, records, "scale kernel=x* factor=2") == 30 * us);  // matches no kernel
}

TEST_CASE("replay: a replayer borrowing the run replays what one with its own copy replays", "[replay]") {
  TraceBuilder run(1);
  waited_reduction(run.rank(0));
  const auto records = load(run);
  const Replayer copied(records), borrowed(&records);
  CHECK(&borrowed.records() == &records);  // no copy
  CHECK(&copied.records() != &records);
  CHECK(borrowed.measured().step_ns == copied.measured().step_ns);
  CHECK(borrowed.run_unchanged().step_ns == copied.run_unchanged().step_ns);
  CHECK(step_with(borrowed, records, "drop kind=wait") == step_with(copied, records, "drop kind=wait"));
  CHECK(step_with(borrowed, records, "drop kind=wait") == 100 * us);
}

TEST_CASE("replay: what-ifs of one replayer run at once, an event on a stream no operation ran on included", "[replay]") {
  // The over-synchronisation pass replays its sites' what-ifs on several threads against one
  // replayer: a what-if's simulation reads the fit and changes nothing of it (the fit itself
  // notes every stream the run names, the one only an event names too). Run under
  // ThreadSanitizer, this also shows no two simulations touch the same memory.
  TraceBuilder run(2);
  std::vector<std::string> specs;
  for (int rank = 0; rank < 2; ++rank) {
    auto& r = run.rank(rank);
    const WaitedReduction w = waited_reduction(r);
    const EventId unseen_event = r.event();
    r.record(unseen_event, StreamId{77});  // no operation, no creation: the scan never sees it
    r.wait(w.compute, unseen_event);
    r.kernel(w.compute, "E", {}, 10);
    const uint64_t grads = r.alloc(4096, "grads");
    r.all_reduce(w.reduction, grads, grads, 1024, TraceBuilder::comm(1));
    specs.push_back("add-wait rank=" + std::to_string(rank) + " after=" + std::to_string(w.b) +
                    " before=" + std::to_string(w.d));
  }
  specs.push_back("drop kind=wait");
  specs.push_back("scale stream=reduction factor=3");
  const auto records = load(run);
  const Replayer replay(&records);
  std::vector<int64_t> alone;
  for (const std::string& spec : specs) alone.push_back(step_with(replay, records, spec));
  for (int round = 0; round < 20; ++round) {
    std::vector<int64_t> together(specs.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < specs.size(); ++i)
      threads.emplace_back([&, i] { together[i] = step_with(replay, records, specs[i]); });
    for (std::thread& t : threads) t.join();
    CHECK(together == alone);
  }
  CHECK(replay.stream_name(0, StreamId{77}) == "stream 77");
}

TEST_CASE("replay: dropping a wait lets the waiting stream run ahead; adding it back restores it", "[replay]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");  // host 1, 2
  const EventId e = r0.event();                                          // host 3
  const uint64_t b = r0.kernel(r, "B", {}, 100);                         // 4..104
  r0.record(e, r);                                                       // fires at 104
  r0.kernel(c, "A", {}, 10);                                             // 6..16
  r0.wait(c, e);
  const uint64_t d = r0.kernel(c, "D", {}, 10);                          // 104..114
  const auto records = load(run);
  const Replayer replay(records);
  REQUIRE(replay.run_unchanged().step_ns == 110 * us);  // 4..114
  // Without the wait D runs right after A: 16..26; B still ends at 104.
  CHECK(step_with(replay, records, "drop kind=wait") == 100 * us);
  WhatIf w;
  analysis::parse_what_if("drop kind=wait", w);
  analysis::parse_what_if("add-wait rank=0 after=" + std::to_string(b) + " before=" + std::to_string(d), w);
  CHECK(replay.run(analysis::apply_edits(records, w)).step_ns == 110 * us);
  // A slower reduction stream delays D through the wait: B 4..204, D 204..214.
  CHECK(step_with(replay, records, "scale stream=reduction factor=2") == 210 * us);
}

TEST_CASE("replay: synchronisations dropped by seq are left out as the replay goes, as from an edited copy", "[replay]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const WaitedReduction w0 = waited_reduction(r0);
  r0.stream_sync(w0.compute);
  r0.host_gap(50);
  r0.kernel(w0.compute, "E", {}, 10);
  const auto records = load(run);
  const Replayer replay(&records);
  std::vector<uint64_t> syncs;  // the wait and the stream synchronisation
  for (const trace::Record& rec : records[0].records)
    if (analysis::sync_kind(rec))
      std::visit([&](const auto& x) {
        if constexpr (requires { x.seq; }) syncs.push_back(x.seq);
      }, rec);
  REQUIRE(syncs.size() == 2);
  for (const auto& drop : std::vector<std::set<std::pair<int, uint64_t>>>{{{0, syncs[0]}}, {{0, syncs[1]}},
                                                                          {{0, syncs[0]}, {0, syncs[1]}}}) {
    WhatIf w;
    w.drop = drop;
    const int64_t in_place = replay.run(records, {}, &w.drop).step_ns;
    CHECK(in_place == replay.run(analysis::apply_edits(records, w), {}, &w.drop).step_ns);
    CHECK(in_place < replay.run_unchanged().step_ns);  // each of them held the run up
  }
}

TEST_CASE("replay: a what-if read in place replays what its edited copy replays", "[replay]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const auto [c, r, b, a, d] = waited_reduction(r0);
  const uint64_t f = r0.kernel(r, "F", {}, 30);
  r0.stream_sync(c);
  r0.host_gap(20);
  const uint64_t g = r0.kernel(c, "G", {}, 10);
  const auto records = load(run);
  const Replayer replay(&records);
  for (const std::string& spec : {std::string("drop kind=wait"),
                                  "drop kind=wait\nadd-wait rank=0 after=" + std::to_string(b) + " before=" + std::to_string(d),
                                  "add-wait rank=0 after=" + std::to_string(f) + " before=" + std::to_string(g),
                                  "add-wait rank=0 after=" + std::to_string(a) + " before=" + std::to_string(f) +
                                      "\nscale stream=reduction factor=2"}) {
    WhatIf w;
    std::istringstream lines(spec);
    for (std::string line; std::getline(lines, line);) analysis::parse_what_if(line, w);
    CAPTURE(spec);
    const analysis::Schedule in_place = replay.run_in_place(records, w);
    const analysis::Schedule copied = replay.run(analysis::apply_edits(records, w), w.scales, &w.drop);
    CHECK(in_place.step_ns == copied.step_ns);
    REQUIRE(in_place.ops.size() == copied.ops.size());
    REQUIRE(in_place.ops[0].size() == copied.ops[0].size());
    copied.ops[0].for_each([&](uint64_t seq, const analysis::OpTime& t) {
      CAPTURE(seq);
      REQUIRE(in_place.ops[0].contains(seq));
      CHECK(in_place.ops[0].at(seq).start == t.start);
      CHECK(in_place.ops[0].at(seq).end == t.end);
    });
  }
  // The added wait holds G behind F (ends at 134 + 30 µs), which the plain run does not.
  WhatIf w;
  analysis::parse_what_if("add-wait rank=0 after=" + std::to_string(f) + " before=" + std::to_string(g), w);
  CHECK(replay.run_in_place(records, w).step_ns > replay.run_unchanged().step_ns);
}

TEST_CASE("replay: host gaps after a host synchronisation are kept, the blocking moves", "[replay]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId s = r0.stream("s");  // host 1
  r0.kernel(s, "K1", {}, 100);        // 2..102
  r0.stream_sync(s);                  // host returns at 102 (+1 µs API)
  r0.host_gap(50);
  r0.kernel(s, "K2", {}, 10);         // 154..164
  const auto records = load(run);
  const Replayer replay(records);
  REQUIRE(replay.run_unchanged().step_ns == 162 * us);
  // K1 takes 200 µs: the host returns at 202 and issues K2 52 µs later: 254..264.
  CHECK(step_with(replay, records, "scale kernel=K1 factor=2") == 262 * us);
  // Without the synchronisation the host issues K2 at 2 + 52 µs, the stream is busy until 102.
  CHECK(step_with(replay, records, "drop kind=stream-sync") == 110 * us);
}

TEST_CASE("replay: a collective ends once its last rank has started it", "[replay]") {
  TraceBuilder run(2);
  for (int r = 0; r < 2; ++r) {
    auto& rk = run.rank(r);
    const StreamId s = rk.stream(r == 0 ? "slow" : "fast");  // host 1
    const uint64_t buf = rk.alloc(4096, "grads");            // host 2
    rk.kernel(s, "compute", {}, 50);                         // 3..53
    rk.all_reduce(s, buf, buf, 1024, TraceBuilder::comm(), 20);  // 53..73
  }
  const auto records = load(run);
  const Replayer replay(records);
  REQUIRE(replay.run_unchanged().step_ns == 70 * us);
  // Rank 0 computes for 100 µs: both all-reduces start their transfer at 103 and end at 123.
  const auto s = replay.run(records, {analysis::DurationScale{"slow", "compute", 2}});
  CHECK(s.step_ns == 120 * us);
  REQUIRE(!s.ops[1].empty());
  int64_t rank1_end = 0;
  s.ops[1].for_each([&](uint64_t, const analysis::OpTime& t) { rank1_end = std::max(rank1_end, t.end); });
  CHECK(rank1_end == 123 * us);
}

TEST_CASE("replay: steps are the instances of the NVTX range, the first one warm-up", "[replay]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId s = r0.stream("s");
  const uint64_t buf = r0.alloc(256);
  for (int step = 0; step < 3; ++step) {
    r0.push_range("step");
    r0.memset(s, buf, 256, 0, 1);
    r0.push_range("forward");
    r0.kernel(s, "fwd", {}, step == 0 ? 500 : 10);  // a slow warm-up step
    r0.pop_range();
    r0.pop_range();
    r0.stream_sync(s);
    r0.host_gap(100);
  }
  const auto records = load(run);
  const Replayer replay(records);
  CHECK(replay.measured().measured_steps == 2);
  CHECK(replay.measured().step_ns == 11 * us);  // memset 1 µs, then the kernel 10 µs
  CHECK(replay.run_unchanged().step_ns == 11 * us);
  CHECK(step_with(replay, records, "scale kernel=fwd factor=2") == 21 * us);
}

// The same steps with the NVTX range or without it: a set-up that does not repeat, then steps
// that each all-reduce and end waiting for their stream (as a loss read does).
TraceBuilder steps_run(bool ranges) {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId s = r0.stream("s");
  const uint64_t buf = r0.alloc(1 << 16);
  r0.nccl(s, NcclKind::Broadcast, buf, buf, 4096, TraceBuilder::comm(0), 20, 0);
  r0.device_sync();
  for (int step = 0; step < 4; ++step) {
    if (ranges) r0.push_range("step");
    r0.memset(s, buf, 256, 0, 1);
    r0.kernel(s, "fwd", {}, step == 0 ? 500 : 10 + step);  // a slow warm-up step
    r0.all_reduce(s, buf, buf, 1024, TraceBuilder::comm(0));
    if (ranges) r0.pop_range();
    r0.stream_sync(s);
    r0.host_gap(100);
  }
  return run;
}

TEST_CASE("replay: without a step range, the steps are the repeating pattern, the first one warm-up", "[replay]") {
  const auto unmarked = load(steps_run(false));
  const auto marked = load(steps_run(true));
  const Replayer by_pattern(unmarked), by_range(marked);
  CHECK(by_pattern.measured().measured_steps == 3);
  CHECK(by_pattern.measured().step_ns == by_range.measured().step_ns);
  REQUIRE(by_pattern.measured().step_windows.at(0).size() == 3);
  // The warm-up step's 500 µs kernel is in no measured step.
  CHECK(by_pattern.measured().step_ns < 100 * us);
  bool said = false;
  for (const std::string& n : by_pattern.notes()) said |= n.find("4 step(s) per rank from the repeating pattern") == 0;
  CHECK(said);
  const std::string times = analysis::describe_step_times(by_pattern.measured(), unmarked);
  CHECK(times.find("step times of rank 0: ") == 0);
  CHECK(std::count(times.begin(), times.end(), ',') == 2);
  // A run measured from after its warm-up counts every step.
  analysis::ReplayOptions all;
  all.first_step_warmup = false;
  CHECK(Replayer(unmarked, all).measured().measured_steps == 4);
}

TEST_CASE("replay: what-if specs are checked", "[replay]") {
  WhatIf w;
  CHECK_THROWS_AS(analysis::parse_what_if("drop kind=barrier", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("scale factor=2", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("scale stream=a factor=-1", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("add-wait rank=0 after=9 before=3", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("teleport", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("scale stream=\"open factor=2", w), analysis::WhatIfError);
  analysis::parse_what_if("  # a comment", w);
  CHECK(w.empty());
  analysis::parse_what_if("scale stream=\"reduction stream\" factor=1.5  # slow", w);
  REQUIRE(w.scales.size() == 1);
  CHECK(w.scales[0].stream == "reduction stream");
  CHECK(w.scales[0].factor == 1.5);
  WhatIf again;
  for (const std::string& line : {std::string("drop rank=1 seq=42"), std::string("minimal-sync")})
    analysis::parse_what_if(line, again);
  std::stringstream text(analysis::format_what_if(again));
  WhatIf parsed;
  for (std::string line; std::getline(text, line);) analysis::parse_what_if(line, parsed);
  CHECK(parsed.drop == again.drop);
  CHECK(parsed.minimal_sync);
}

TEST_CASE("replay: a trace without GPU times is refused", "[replay]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  r0.stream_sync(r0.stream("s"));  // no operation, so no timing
  CHECK_THROWS_AS(Replayer(load(run)), analysis::WhatIfError);
}

}  // namespace streamhaz::testing
