// Running ahead of collectives: a rank takes an all-reduce-like call before the others reach
// it, with the promise of what the call will tell (knowledge.h). The matcher keeps promises
// as calls resolve, resolves a call that names an unkept promise only after it, breaks cycles
// of such calls when no rank can move, and catches a wrong guess; the analysis then runs
// again without running ahead, so the findings are those of a pass in which every rank waits.
#include <catch2/catch.hpp>

#include <vector>

#include "clock/knowledge.h"
#include "engine/collective_matcher.h"
#include "scenario.h"

using namespace streamhaz;
using namespace streamhaz::analysis;
using streamhaz::testing::TraceBuilder;

namespace {

VectorClock clock_of(std::vector<ClockValue> values) {
  VectorClock c;
  for (size_t i = 0; i < values.size(); ++i) c.set(static_cast<TimelineId>(i), values[i]);
  return c;
}

trace::Nccl call(uint64_t comm, uint64_t seq, uint32_t rank, uint32_t nranks,
                 trace::NcclKind kind = trace::NcclKind::AllReduce) {
  trace::Nccl n;
  n.kind = kind;
  n.count = 4;
  n.comm = comm;
  n.rank = rank;
  n.nranks = nranks;
  n.comm_seq = seq;
  return n;
}

// Rank `index` runs ahead of the call and hands its post over at once.
PromiseRef ahead(CollectiveMatcher& m, uint32_t index, const trace::Nccl& n, const VectorClock& start,
                 std::vector<Known> known = {}) {
  AheadPost post{n, start, std::move(known), std::make_shared<FrontierPromise>()};
  m.post_ahead(index, {&post, 1});
  return post.promise;
}

}  // namespace

TEST_CASE("run ahead: the promise is kept with what taking the call would have given", "[cross-rank][run-ahead]") {
  CollectiveMatcher m;
  const PromiseRef promise = ahead(m, 0, call(7, 1, 0, 2), clock_of({3}));
  CHECK_FALSE(promise->kept());
  CHECK_FALSE(m.ready({7, 1}));
  // The last rank resolves it: it takes the call at once.
  CHECK_FALSE(m.post(1, call(7, 1, 1, 2), clock_of({0, 5}), {}));
  REQUIRE(promise->kept());
  VectorClock c1 = clock_of({0, 5});
  const FrontierRef taken = m.take({7, 1}, 1, 1, {}, c1);
  REQUIRE(taken);
  CHECK(promise->value() == taken);  // the same frontier the waiting rank got
  CHECK_FALSE(m.speculation_failed());
  // Ranks that disagree on the call get no edge: the promise is of nothing, the guess right.
  const PromiseRef mismatched = ahead(m, 0, call(7, 2, 0, 2), clock_of({4}));
  CHECK_FALSE(m.post(1, call(7, 2, 1, 2, trace::NcclKind::AllGather), clock_of({0, 6}), {}));
  REQUIRE(mismatched->kept());
  CHECK_FALSE(mismatched->value());
  CHECK_FALSE(m.speculation_failed());
}

TEST_CASE("run ahead: a call that brings the rank order its start lacked is caught", "[cross-rank][run-ahead]") {
  CollectiveMatcher m;
  // Rank 1 learnt rank 0 at {5} through an earlier call (a frontier it knows)...
  FrontierBuilder b;
  b.start(0);
  const ClockValue five[] = {5};
  b.add(0, five, 1);
  const FrontierRef earlier = b.build();
  // ...and rank 0 runs ahead of the next call with a start of {3}: the guess is wrong.
  const PromiseRef promise = ahead(m, 0, call(7, 1, 0, 2), clock_of({3}));
  std::vector<Known> known{earlier};
  CHECK_FALSE(m.post(1, call(7, 1, 1, 2), clock_of({0, 1}), known));
  CHECK(promise->kept());
  CHECK(m.speculation_failed());
}

TEST_CASE("run ahead: a call naming an unkept promise resolves only after it", "[cross-rank][run-ahead]") {
  CollectiveMatcher m;
  // Rank 0 runs ahead of call A (with rank 2) and then of call B (with rank 1), whose start
  // knows A's receipt.
  const PromiseRef a0 = ahead(m, 0, call(1, 1, 0, 2), clock_of({1}));
  const PromiseRef b0 = ahead(m, 0, call(2, 1, 0, 2), clock_of({3}), {Known(a0)});
  // Rank 1 reaches B: every rank posted it, but what B carries depends on A.
  CHECK(m.post(1, call(2, 1, 1, 2), clock_of({0, 4}), {}));
  CHECK_FALSE(m.ready({2, 1}));
  CHECK(m.take_woken().empty());
  // Rank 2 reaches A: A resolves, then B, which wakes rank 1.
  CHECK_FALSE(m.post(2, call(1, 1, 1, 2), clock_of({0, 0, 6}), {}));
  CHECK(m.ready({2, 1}));
  CHECK(m.take_woken() == std::vector<uint32_t>{1});
  VectorClock c1 = clock_of({0, 4});
  const FrontierRef got = m.take({2, 1}, 1, 1, {}, c1);
  REQUIRE(got);
  // Rank 1 learns, through rank 0's start of B, that rank 2 had started A.
  const auto [values, n] = got->of(2);
  REQUIRE(n == 3);
  CHECK(values[2] == 6);
  CHECK(b0->kept());
  CHECK_FALSE(m.speculation_failed());
  CHECK(m.partial() == 0);
}

TEST_CASE("run ahead: calls that wait for each other's promises are resolved when no rank can move",
          "[cross-rank][run-ahead]") {
  CollectiveMatcher m;
  // Rank 0 runs ahead of A then B, rank 1 of B then A, each later start knowing the earlier
  // receipt: on a GPU this deadlocks; here each call waits for the other's promise.
  const PromiseRef a0 = ahead(m, 0, call(1, 1, 0, 2), clock_of({1}));
  const PromiseRef b0 = ahead(m, 0, call(2, 1, 0, 2), clock_of({2}), {Known(a0)});
  const PromiseRef b1 = ahead(m, 1, call(2, 1, 1, 2), clock_of({0, 1}));
  const PromiseRef a1 = ahead(m, 1, call(1, 1, 1, 2), clock_of({0, 2}), {Known(b1)});
  CHECK_FALSE(m.ready({1, 1}));
  CHECK_FALSE(m.ready({2, 1}));
  m.release_all();
  CHECK(m.ready({1, 1}));
  CHECK(m.ready({2, 1}));
  CHECK(a0->kept());
  CHECK(b0->kept());
  CHECK(a1->kept());
  CHECK(b1->kept());
  // The call forced first (A: the lower key) resolved without B's promise: counted as partial,
  // and the pass must run again with ranks waiting (which gives both calls up).
  CHECK(m.partial() == 1);
  CHECK(m.speculation_failed());
}

namespace {

// The analysis of `run` with ranks running ahead (on one thread and on two) is the one with
// every rank waiting at each call; returns that one.
AnalysisResult same_as_waiting(const TraceBuilder& run) {
  AnalysisOptions waiting;
  waiting.run_ahead = 0;
  waiting.backfill_timings = false;
  AnalysisOptions ahead = waiting;
  ahead.run_ahead = 16;
  ahead.run_ahead_from_ranks = 2;
  const AnalysisResult reference = testing::analyze_in_memory(run, waiting);
  for (unsigned jobs : {1u, 2u}) {
    CAPTURE(jobs);
    ahead.jobs = jobs;
    const AnalysisResult got = testing::analyze_in_memory(run, ahead);
    CHECK(got.warnings == reference.warnings);
    REQUIRE(got.findings.size() == reference.findings.size());
    for (size_t i = 0; i < got.findings.size(); ++i) CHECK(got.findings[i].key == reference.findings[i].key);
  }
  return reference;
}

}  // namespace

TEST_CASE("run ahead: a wrong guess runs the analysis again, with every rank waiting", "[cross-rank][run-ahead]") {
  // Rank 0 calls X on stream a, then Y on stream b (not ordered after a). Rank 1 calls Y, then
  // X on the same stream. Running ahead, rank 0 takes X before rank 1 reaches it, but X brings
  // rank 0's start of Y back to stream a: the guess is wrong. With every rank waiting at each
  // call the two ranks wait for each other (a rank waits as a whole), and both calls are given
  // up (fewer edges, a warning): the fallback must give exactly that.
  TraceBuilder run(2);
  const uint64_t x = TraceBuilder::comm(1), y = TraceBuilder::comm(2);
  {
    auto& r = run.rank(0);
    const auto a = r.stream("stream a"), b = r.stream("stream b");
    const uint64_t buf = r.alloc(1024, "buf"), t = r.alloc(64, "t");
    r.kernel(a, "writer", {trace::writes(buf, 1024)});
    r.kernel(b, "early b", {trace::reads(t, 64)});
    r.all_reduce(a, t, t, 16, x);
    r.all_reduce(b, t, t, 16, y);
    r.kernel(b, "reader", {trace::reads(buf, 1024)});
  }
  {
    auto& r = run.rank(1);
    const auto s = r.stream("stream s");
    const uint64_t t = r.alloc(64, "t");
    r.all_reduce(s, t, t, 16, y);
    r.all_reduce(s, t, t, 16, x);
  }
  const AnalysisResult reference = same_as_waiting(run);
  REQUIRE(reference.warnings.size() == 1);  // the two calls given up
  CHECK(reference.warnings[0].find("2 NCCL collective(s) were not reached") != std::string::npos);
}

TEST_CASE("run ahead: calls in opposite orders on two ranks (a GPU deadlock) are given up as by waiting ranks",
          "[cross-rank][run-ahead]") {
  // Both ranks issue X and Y on one stream, in opposite orders: every call runs ahead, each
  // waits for the other's promise, and only the end of the pass resolves them.
  TraceBuilder run(2);
  const uint64_t x = TraceBuilder::comm(1), y = TraceBuilder::comm(2);
  for (int i = 0; i < 2; ++i) {
    auto& r = run.rank(i);
    const auto s = r.stream("stream");
    const uint64_t buf = r.alloc(1024, "buf"), t = r.alloc(64, "t");
    r.kernel(s, "writer", {trace::writes(buf, 1024)});
    r.all_reduce(s, t, t, 16, i == 0 ? x : y);
    r.all_reduce(s, t, t, 16, i == 0 ? y : x);
    r.kernel(r.stream("other"), "reader", {trace::reads(buf, 1024)});
  }
  const AnalysisResult reference = same_as_waiting(run);
  REQUIRE(reference.warnings.size() == 1);
  CHECK(reference.warnings[0].find("2 NCCL collective(s) were not reached") != std::string::npos);
  CHECK(reference.findings.size() == 1);  // the reader on another stream races with the writer
}

TEST_CASE("run ahead: a call given up at a standstill makes the pass run again with ranks waiting",
          "[cross-rank][run-ahead]") {
  // R calls W, V, U on one stream. Q writes buf on q1 and calls W there; on q2 it calls U,
  // reads buf and calls V. On a GPU this deadlocks; waiting, R stops at V and Q at U, both are
  // given up and Q's read races with its write. Running ahead, only V stays incomplete: giving
  // it up alone would let U resolve with R's post, order the read after the write through W,
  // and hide the race.
  TraceBuilder run(2);
  const uint64_t w = TraceBuilder::comm(1), v = TraceBuilder::comm(2), u = TraceBuilder::comm(3);
  {
    auto& r = run.rank(0);
    const auto s = r.stream("s");
    const uint64_t t0 = r.alloc(64, "t0"), t1 = r.alloc(64, "t1"), t2 = r.alloc(64, "t2");
    r.nccl_in_group(s, trace::NcclKind::AllReduce, t0, t0, 16, w, 0, 2);
    r.nccl_in_group(s, trace::NcclKind::AllReduce, t1, t1, 16, v, 0, 2);
    r.nccl_in_group(s, trace::NcclKind::AllReduce, t2, t2, 16, u, 0, 2);
  }
  {
    auto& r = run.rank(1);
    const auto q1 = r.stream("q1"), q2 = r.stream("q2");
    const uint64_t buf = r.alloc(1024, "buf");
    const uint64_t t0 = r.alloc(64, "t0"), t1 = r.alloc(64, "t1"), t2 = r.alloc(64, "t2");
    r.kernel(q1, "writer", {trace::writes(buf, 1024)});
    r.nccl_in_group(q1, trace::NcclKind::AllReduce, t0, t0, 16, w, 1, 2);
    r.nccl_in_group(q2, trace::NcclKind::AllReduce, t2, t2, 16, u, 1, 2);
    r.kernel(q2, "reader", {trace::reads(buf, 1024)});
    r.nccl_in_group(q2, trace::NcclKind::AllReduce, t1, t1, 16, v, 1, 2);
  }
  const AnalysisResult reference = same_as_waiting(run);
  CHECK(testing::findings_on(reference, "buf").size() == 1);
}

TEST_CASE("run ahead: a call the ranks disagree on passes on what the rank knew at its start",
          "[cross-rank][run-ahead]") {
  // A calls X twice (the second with another count than B's), then Y; B writes buf, calls X
  // twice on b1, then Z on b2 and reads buf; C calls Y then Z. Waiting, the mismatched X gives
  // A no receipt, so A's Y passes on the first X's frontier (B's write) to C, and C's Z to B's
  // b2: the read is ordered. Running ahead, A noted a receipt for the mismatched call; it must
  // not hide the earlier one.
  TraceBuilder run(3);
  const uint64_t x = TraceBuilder::comm(1), y = TraceBuilder::comm(2), z = TraceBuilder::comm(3);
  {
    auto& r = run.rank(0);
    const auto a1 = r.stream("a1");
    const uint64_t t = r.alloc(64, "t"), t2 = r.alloc(64, "t2"), t3 = r.alloc(64, "t3");
    r.nccl_in_group(a1, trace::NcclKind::AllReduce, t, t, 16, x, 0, 2);
    r.nccl_in_group(a1, trace::NcclKind::AllReduce, t2, t2, 8, x, 0, 2);  // B says 16
    r.nccl_in_group(a1, trace::NcclKind::AllReduce, t3, t3, 16, y, 0, 2);
  }
  {
    auto& r = run.rank(1);
    const auto b1 = r.stream("b1"), b2 = r.stream("b2");
    const uint64_t buf = r.alloc(1024, "buf");
    const uint64_t t = r.alloc(64, "t"), t2 = r.alloc(64, "t2"), t4 = r.alloc(64, "t4");
    r.kernel(b1, "writer", {trace::writes(buf, 1024)});
    r.nccl_in_group(b1, trace::NcclKind::AllReduce, t, t, 16, x, 1, 2);
    r.nccl_in_group(b1, trace::NcclKind::AllReduce, t2, t2, 16, x, 1, 2);
    r.nccl_in_group(b2, trace::NcclKind::AllReduce, t4, t4, 16, z, 0, 2);
    r.kernel(b2, "reader", {trace::reads(buf, 1024)});
  }
  {
    auto& r = run.rank(2);
    const auto c1 = r.stream("c1");
    const uint64_t t3 = r.alloc(64, "t3"), t4 = r.alloc(64, "t4");
    r.nccl_in_group(c1, trace::NcclKind::AllReduce, t3, t3, 16, y, 1, 2);
    r.nccl_in_group(c1, trace::NcclKind::AllReduce, t4, t4, 16, z, 1, 2);
  }
  const AnalysisResult reference = same_as_waiting(run);
  CHECK(testing::findings_on(reference, "buf").empty());
}

TEST_CASE("run ahead: a late post that differs from a released call gets what take() gives: nothing new",
          "[cross-rank][run-ahead]") {
  FrontierBuilder b;
  b.start(0);
  const ClockValue nine[] = {9};
  b.add(0, nine, 1);
  const FrontierRef earlier = b.build();
  // Rank 1 posts an all-reduce knowing `earlier`; no rank can move, so it is released.
  auto released = [&](CollectiveMatcher& m) {
    std::vector<Known> known{earlier};
    CHECK(m.post(1, call(7, 0, 1, 2), clock_of({0, 5}), known));
    m.release_all();
  };
  CollectiveMatcher waiting;
  released(waiting);
  CHECK_FALSE(waiting.post(0, call(7, 0, 0, 2, trace::NcclKind::AllGather), clock_of({10}), {}));
  VectorClock c = clock_of({10});
  CHECK_FALSE(waiting.take({7, 0}, 0, 0, {}, c));  // refused: nothing
  CHECK(c == clock_of({10}));
  CollectiveMatcher m;
  released(m);
  const PromiseRef p = ahead(m, 0, call(7, 0, 0, 2, trace::NcclKind::AllGather), clock_of({10}));
  REQUIRE(p->kept());
  CHECK_FALSE(p->value());  // rank 0 knew nothing at its start, and the call gave it nothing
  CHECK(m.ready({7, 0}));
}

TEST_CASE("run ahead: calls in crossing orders on unordered streams resolve, where waiting ranks give them up",
          "[cross-rank][run-ahead]") {
  // Rank 0 calls X then Y on one stream; rank 1 calls Y on one stream and X on another, both
  // its first operations. A GPU runs this; ranks that wait as a whole stall (rank 0 at X, rank
  // 1 at Y) and give both up. Running ahead, both resolve with every post, every guess right.
  TraceBuilder run(2);
  const uint64_t x = TraceBuilder::comm(1), y = TraceBuilder::comm(2);
  {
    auto& r = run.rank(0);
    const auto a = r.stream("a");
    const uint64_t t = r.alloc(64, "t");
    r.all_reduce(a, t, t, 16, x);
    r.all_reduce(a, t, t, 16, y);
  }
  {
    auto& r = run.rank(1);
    const auto s = r.stream("s"), u = r.stream("u");
    const uint64_t t = r.alloc(64, "t"), v = r.alloc(64, "v");
    r.all_reduce(s, t, t, 16, y);
    r.all_reduce(u, v, v, 16, x);
  }
  AnalysisOptions o;
  o.backfill_timings = false;
  o.run_ahead = 0;
  const AnalysisResult waiting = testing::analyze_in_memory(run, o);
  REQUIRE(waiting.warnings.size() == 1);
  CHECK(waiting.warnings[0].find("2 NCCL collective(s) were not reached") != std::string::npos);
  o.run_ahead = 16;
  o.run_ahead_from_ranks = 2;
  for (unsigned jobs : {1u, 2u}) {
    o.jobs = jobs;
    CHECK(testing::analyze_in_memory(run, o).warnings.empty());
  }
}
