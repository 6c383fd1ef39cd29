// The sample of judged steps the over-synchronisation pass replays each site's change on
// (analyzer/src/sync/cost_sample.h): the first steps of every rank, with their GPU times.
#include <catch2/catch.hpp>

#include <set>

#include "scenario.h"
#include "sync/cost_sample.h"

namespace streamhaz::testing {
namespace {

// `steps` steps per rank with no step range: a kernel, an all-reduce, a wait for the stream.
TraceBuilder unmarked_steps(int world, int steps) {
  TraceBuilder run(world);
  for (int i = 0; i < world; ++i) {
    auto& r = run.rank(i);
    const StreamId s = r.stream("s");
    const uint64_t buf = r.alloc(1 << 16);
    r.device_sync();
    for (int step = 0; step < steps; ++step) {
      r.kernel(s, "fwd", {}, 10);
      r.all_reduce(s, buf, buf, 1024, TraceBuilder::comm(0));
      r.stream_sync(s);
    }
  }
  return run;
}

std::set<uint64_t> op_seqs(const analysis::RankRecords& rr) {
  std::set<uint64_t> out;
  for (const trace::Record& r : rr.records)
    if (const trace::OpCommon* op = trace::op_common(r)) out.insert(op->seq);
  return out;
}

}  // namespace

TEST_CASE("cost sample: every rank cut after its first steps, their GPU times kept", "[oversync][sample]") {
  const auto run = load(unmarked_steps(2, 6));
  const auto sample = analysis::sample_steps(run, "step", 3);
  REQUIRE(sample.size() == 2);
  for (size_t ri = 0; ri < 2; ++ri) {
    const std::set<uint64_t> kept = op_seqs(sample[ri]), all = op_seqs(run[ri]);
    CHECK(kept.size() == 3 * 2);  // three steps of a kernel and an all-reduce
    CHECK(all.size() == 6 * 2);
    std::set<uint64_t> timed;
    for (const trace::Record& r : sample[ri].records)
      if (const auto* t = std::get_if<trace::Timing>(&r)) timed.insert(t->op_seq);
    CHECK(timed == kept);  // none lost at the cut, none of a dropped operation
    CHECK(sample[ri].pattern_step_starts.size() == 3);
    CHECK(sample[ri].pattern_steps_end <= sample[ri].records.size());
  }
}

TEST_CASE("cost sample: a window of few steps is its own sample", "[oversync][sample]") {
  CHECK(analysis::sample_steps(load(unmarked_steps(1, 3)), "step", 3).empty());
  CHECK(analysis::sample_steps(load(unmarked_steps(2, 4)), "step", 3).size() == 2);
}

TEST_CASE("cost sample: pairs within it are those whose two operations it holds", "[oversync][sample]") {
  const auto run = load(unmarked_steps(1, 6));
  const auto sample = analysis::sample_steps(run, "step", 3);
  REQUIRE(sample.size() == 1);
  const analysis::RunVariants variants = analysis::make_variants(sample, true);
  const std::set<uint64_t> kept = op_seqs(sample[0]), all = op_seqs(run[0]);
  const uint64_t in = *kept.begin(), also = *kept.rbegin(), out = *all.rbegin();
  const analysis::PairSet pairs{{0, in, also}, {0, in, out}, {1, in, also}};
  CHECK(analysis::OpsWithin(sample, variants).filter(pairs) == analysis::PairSet{{0, in, also}});
}

TEST_CASE("cost sample: its idle queries are the window's that it holds, as a check of its own finds", "[oversync][sample]") {
  TraceBuilder job(2);
  for (int i = 0; i < 2; ++i) {
    auto& r = job.rank(i);
    const StreamId s = r.stream("s");
    const uint64_t buf = r.alloc(1 << 16);
    r.device_sync();
    for (int step = 0; step < 6; ++step) {
      r.kernel(s, "fwd", {}, 10);
      r.all_reduce(s, buf, buf, 1024, TraceBuilder::comm(0));
      r.stream_query(s, true);  // observes the GPU on its own
      r.stream_sync(s);
      r.stream_query(s, true);  // only repeats the synchronisation: idle
    }
  }
  const auto run = load(job);
  analysis::RunVariants window = analysis::make_variants(run, false);
  REQUIRE(window.idle_queries.size() == 2 * 6);
  const analysis::Replayer replay(&run, analysis::ReplayOptions{});
  const analysis::Schedule unchanged = replay.run_unchanged();
  const analysis::CostSample sample(analysis::CostRun{&run, &replay, &unchanged, &window}, "step",
                                    analysis::ReplayOptions{}, nullptr);
  const analysis::CostRun& use = sample.get();
  REQUIRE(use.sampled);
  const analysis::RunVariants own = analysis::make_variants(*use.run, true);
  CHECK(use.variants->idle_queries_found);
  CHECK(use.variants->idle_queries.size() == 2 * 3);
  CHECK(use.variants->idle_queries == own.idle_queries);
}

}  // namespace streamhaz::testing
