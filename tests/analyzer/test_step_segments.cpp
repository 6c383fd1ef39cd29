// The over-synchronisation pass's judged window of a trace without a step range: its pattern
// steps shaped from the first read's sums (analyzer/src/sync/step_segments.h) must be the window
// a second read shapes, record for record; where the sums cannot say, the second read is taken.
// And of a trace with one: the GPU times the first read kept (TraceShape::timings) must be those a
// read of the rest of the trace finds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "scenario.h"
#include "sync/shape_reader.h"
#include "sync/sync_window.h"

namespace streamhaz::testing {
namespace {

using analysis::JudgedWindow;
using analysis::RankRecords;
using analysis::WindowBudget;

// A set-up that does not repeat, then steps that each run a few kernels, all-reduce twice and
// wait for their loss; with GPU times (the builder writes each right after its operation).
// `ranged`: each step inside the script's NVTX range "step", its last copy issued between steps.
TraceBuilder steps_run(int ranks, int steps, bool ranged) {
  TraceBuilder run(ranks);
  for (int i = 0; i < ranks; ++i) {
    auto& r = run.rank(i);
    const StreamId c = r.stream("compute"), red = r.stream("reduction");
    const uint64_t x = r.alloc(4096, "X"), g = r.alloc(1 << 16, "G");
    r.nccl(c, NcclKind::Broadcast, g, g, 1024, TraceBuilder::comm(0), 20, 0);
    for (int k = 0; k < 3; ++k) {
      r.kernel(c, "init", {writes(x, 64)}, 1);
      r.device_sync();
    }
    for (int k = 0; k < steps; ++k) {
      if (ranged) r.push_range("step");
      const EventId e = r.event();
      r.kernel(c, "forward", {reads(x, 4096), writes(g, 4096)}, 50);
      r.record(e, c);
      r.wait(red, e);
      r.all_reduce(red, g, g, 1024, TraceBuilder::comm(0));
      r.all_reduce(red, g, g, 2048, TraceBuilder::comm(0));
      if (ranged) r.pop_range();
      r.memcpy(c, x, g, 64);  // ranged: between steps, the next window's with range edges
      r.stream_sync(red);
      r.stream_sync(c);
    }
  }
  return run;
}
TraceBuilder unmarked_steps(int ranks, int steps) { return steps_run(ranks, steps, false); }
TraceBuilder ranged_steps(int ranks, int steps) { return steps_run(ranks, steps, true); }

// The same run with each rank's records rearranged by `edit` (a tracer that delivers GPU times
// late, or writes a thread's calls after another's).
template <class Edit> TraceBuilder edited(const TraceBuilder& run, Edit edit) {
  TraceBuilder out(run.world_size());
  for (int i = 0; i < run.world_size(); ++i) {
    std::vector<Record> records = const_cast<TraceBuilder&>(run).rank(i).records();
    edit(records);
    for (const Record& r : records) out.rank(i).add(r);
  }
  return out;
}

struct Loaded {
  std::vector<RankRecords> run;
  std::vector<JudgedWindow> windows;
  bool cut = false;
};

Loaded load_windows(const TraceBuilder& run, WindowBudget budget) {
  const auto dir = fresh_dir();
  run.write_dir(dir.string());
  Loaded l;
  l.run = analysis::load_judged_windows(expand_trace_paths({dir.string()}), budget, l.windows);
  l.cut = analysis::any_window_cut(l.windows);
  std::filesystem::remove_all(dir);
  return l;
}

// Both ways to the window of `run` under `budget`; returns whether the one read served.
bool same_window_both_ways(const TraceBuilder& run, WindowBudget budget) {
  const Loaded once = load_windows(run, budget);
  budget.reread_pattern_steps = true;
  const Loaded twice = load_windows(run, budget);
  REQUIRE(once.windows.size() == twice.windows.size());
  bool one_read = true;
  for (size_t i = 0; i < once.windows.size(); ++i) {
    const JudgedWindow &a = once.windows[i], &b = twice.windows[i];
    CHECK(a.pattern_period > 0);
    CHECK(a.pattern_period == b.pattern_period);
    CHECK(a.first_step == b.first_step);
    CHECK(a.last_step == b.last_step);
    CHECK(a.steps == b.steps);
    CHECK(a.first_seq == b.first_seq);
    CHECK(a.first_record == b.first_record);
    CHECK(a.left_out_operations == b.left_out_operations);
    CHECK(b.second_read);
    one_read &= !a.second_read;
    CHECK(once.run[i].records == twice.run[i].records);
    CHECK(once.run[i].pattern_step_starts == twice.run[i].pattern_step_starts);
    CHECK(once.run[i].pattern_steps_end == twice.run[i].pattern_steps_end);
  }
  CHECK(once.cut == twice.cut);
  return one_read;
}

// GPU times delivered at the trace's end (the tracer times few steps and CUPTI hands over its last
// buffer at exit), but for the first `early` of each rank.
TraceBuilder times_at_end(const TraceBuilder& run, size_t early) {
  return edited(run, [early](std::vector<Record>& records) {
    size_t seen = 0;
    std::stable_partition(records.begin(), records.end(), [&](const Record& r) {
      return !std::holds_alternative<Timing>(r) || seen++ < early;
    });
  });
}

// The window loaded with the first read's kept GPU times and with a read of the rest of the trace.
void same_times_both_ways(const TraceBuilder& run, WindowBudget budget) {
  budget.read_late_timings = false;
  const Loaded kept = load_windows(run, budget);
  budget.read_late_timings = true;
  const Loaded read = load_windows(run, budget);
  REQUIRE(kept.run.size() == read.run.size());
  for (size_t i = 0; i < kept.run.size(); ++i) {
    CHECK(kept.windows[i].first_step == read.windows[i].first_step);
    CHECK(kept.windows[i].last_step == read.windows[i].last_step);
    CHECK(kept.run[i].records == read.run[i].records);
  }
  CHECK(kept.cut == read.cut);
}

}  // namespace

TEST_CASE("judged window: GPU times written after it come from the first read's kept ones", "[window]") {
  const auto dir = fresh_dir();
  times_at_end(ranged_steps(1, 8), 0).write_dir(dir.string());
  const auto files = expand_trace_paths({dir.string()});
  const analysis::TraceShape shape = analysis::shape_of(files[0], "step", analysis::TimingKeep{1, 50000}, false);
  std::filesystem::remove_all(dir);
  CHECK(shape.timings_kept);
  // The warm-up step's GPU times are not kept, those between it and the next step are.
  size_t timed = 0;
  for (const analysis::StepShape& s : shape.steps) timed += s.timed + s.timed_after;
  CHECK(shape.timings.size() == timed - shape.steps[0].timed);

  for (int warmup : {0, 1, 2}) {
    for (uint64_t records : {uint64_t{50000}, uint64_t{30}, uint64_t{60}}) {
      WindowBudget budget;
      budget.warmup_steps = warmup;
      budget.records = records;  // a step holds about 20 records
      for (size_t early : {size_t{0}, size_t{5}, size_t{1000}}) {
        INFO("warm-up " << warmup << ", record budget " << records << ", times in place " << early);
        same_times_both_ways(times_at_end(ranged_steps(2, 6), early), budget);
      }
      INFO("no more steps than the warm-up");
      same_times_both_ways(times_at_end(ranged_steps(1, warmup), 0), budget);
    }
  }
}

TEST_CASE("step segments: the first read's sums shape the pattern steps a second read would", "[pattern][window]") {
  WindowBudget whole;
  WindowBudget two_steps;
  two_steps.records = 40;  // a step holds about 20 records: the window is cut after two
  for (const WindowBudget& budget : {whole, two_steps}) {
    CHECK(same_window_both_ways(unmarked_steps(1, 6), budget));
    CHECK(same_window_both_ways(unmarked_steps(3, 5), budget));
  }
}

TEST_CASE("step segments: GPU times delivered at the trace's end count with their operations' steps",
          "[pattern][window]") {
  const TraceBuilder late = edited(unmarked_steps(2, 6), [](std::vector<Record>& records) {
    std::stable_partition(records.begin(), records.end(),
                          [](const Record& r) { return !std::holds_alternative<Timing>(r); });
  });
  WindowBudget budget;
  budget.records = 40;
  CHECK(same_window_both_ways(late, budget));
}

TEST_CASE("step segments: calls out of seq order take the second read", "[pattern][window]") {
  const TraceBuilder swapped = edited(unmarked_steps(1, 6), [](std::vector<Record>& records) {
    // The last two calls of the set-up written in the other order (a second thread's buffer).
    std::vector<size_t> calls;
    for (size_t i = 0; i < records.size(); ++i)
      if (api_seq(records[i]) && std::holds_alternative<DeviceSync>(records[i])) calls.push_back(i);
    REQUIRE(calls.size() >= 2);
    std::swap(records[calls[0]], records[calls[1]]);
  });
  CHECK_FALSE(same_window_both_ways(swapped, WindowBudget{}));
}

}  // namespace streamhaz::testing
