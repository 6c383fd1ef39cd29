// Rules: an NCCL operation is an operation on its stream; collective k of a communicator
// starts on every rank before it ends on every rank (matched by communicator hash and
// sequence number).
#include <catch2/catch.hpp>

#include "scenario.h"

using namespace streamhaz::testing;

namespace {
struct GradReduce {
  TraceBuilder run{2};
  void build(bool reduction_waits) {
    for (int i = 0; i < 2; ++i) {
      RankTraceBuilder& r = run.rank(i);
      StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream");
      uint64_t grad = r.alloc(4096, "grad");
      EventId done = r.event();
      r.kernel(compute, "backward", {writes(grad, 4096)});
      r.record(done, compute);
      if (reduction_waits) r.wait(reduction, done);
      r.all_reduce(reduction, grad, grad, 1024, TraceBuilder::comm(0));
    }
  }
};
}  // namespace

TEST_CASE("NCCL call on a stream: ordered by a wait like any operation", "[rules][nccl]") {
  GradReduce t;
  t.build(true);
  CHECK(analyze_in_memory(t.run).findings.empty());
}

TEST_CASE("NCCL call on a stream: unordered with the producer of its send buffer", "[rules][nccl]") {
  GradReduce t;
  t.build(false);
  auto res = analyze_in_memory(t.run);
  // In-place all-reduce reads and writes grad: one pattern, folded over both ranks.
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.first.name == "backward");
  CHECK(f.second.kind == "ncclAllReduce");
  CHECK(f.second.stream_name == "reduction stream");
  CHECK(f.title == "write-after-write race on grad");
  CHECK(f.occurrences == 2);
  CHECK(f.ranks == std::vector<int>{0, 1});
  CHECK(f.tier == FootprintTier::Annotation);
}

namespace {
// The calls one rank makes on communicators A and B: kind and root (-1: none).
struct Call {
  NcclKind kind = NcclKind::AllReduce;
  int root = -1;
};
struct TransitiveRun {
  bool rank1_orders = true;  // rank 1 orders B after A with an event
  Call a0, b0;               // rank 0's calls
  Call a1, b1;               // rank 1's calls
};

// Rank 0 writes `buf` on stream 1, then takes part in collective A on stream 1; on stream 2
// it takes part in collective B and then reads `buf`. Rank 1 runs A then B, ordered by an
// event when `rank1_orders` is set. Only through rank 1 is the read ordered after the write.
TraceBuilder transitive(const TransitiveRun& t) {
  TraceBuilder run(2);
  const uint64_t comm_a = TraceBuilder::comm(1), comm_b = TraceBuilder::comm(2);
  {
    RankTraceBuilder& r = run.rank(0);
    StreamId s1 = r.stream("stream 1"), s2 = r.stream("stream 2");
    uint64_t buf = r.alloc(1024, "buf"), x = r.alloc(1024, "x"), y = r.alloc(1024, "y");
    r.kernel(s1, "producer", {writes(buf, 1024)});
    r.nccl(s1, t.a0.kind, x, x, 256, comm_a, 20, t.a0.root);
    r.nccl(s2, t.b0.kind, y, y, 256, comm_b, 20, t.b0.root);
    r.kernel(s2, "consumer", {reads(buf, 1024)});
  }
  {
    RankTraceBuilder& r = run.rank(1);
    StreamId sa = r.stream("stream a"), sb = r.stream("stream b");
    uint64_t x = r.alloc(1024, "x"), y = r.alloc(1024, "y");
    EventId e = r.event();
    r.nccl(sa, t.a1.kind, x, x, 256, comm_a, 20, t.a1.root);
    r.record(e, sa);
    if (t.rank1_orders) r.wait(sb, e);
    r.nccl(sb, t.b1.kind, y, y, 256, comm_b, 20, t.b1.root);
  }
  return run;
}

TraceBuilder transitive(bool rank1_orders) {
  TransitiveRun t;
  t.rank1_orders = rank1_orders;
  return transitive(t);
}

// `transitive(true)` with the two collectives of chosen kinds and roots (rank numbers).
TraceBuilder transitive_rooted(NcclKind kind_a, int root_a, NcclKind kind_b, int root_b) {
  TransitiveRun t;
  t.a0 = t.a1 = Call{kind_a, root_a};
  t.b0 = t.b1 = Call{kind_b, root_b};
  return transitive(t);
}
}  // namespace

TEST_CASE("cross-rank collectives carry ordering from one rank through another", "[rules][nccl-cross-rank]") {
  auto res = analyze_in_memory(transitive(true));
  CHECK(res.findings.empty());
  CHECK(res.warnings.empty());
}

TEST_CASE("without the ordering on the other rank the read races", "[rules][nccl-cross-rank]") {
  auto res = analyze_in_memory(transitive(false));
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.name == "producer");
  CHECK(res.findings[0].second.name == "consumer");
  CHECK(res.findings[0].ranks == std::vector<int>{0});
}

TEST_CASE("a rank analysed without its peers gets no cross-rank edges, and a warning",
          "[rules][nccl-cross-rank]") {
  auto res = analyze_ranks(transitive(true), {0});
  REQUIRE(res.findings.size() == 1);  // the edge through rank 1 is unknown: reported
  REQUIRE(res.warnings.size() == 1);
  CHECK(res.warnings[0].find("not reached by all their ranks") != std::string::npos);
}

TEST_CASE("a collective's end is after the start, not the end, of the other ranks' calls",
          "[rules][nccl-cross-rank]") {
  // Rank 0's all-reduce writes buf; rank 1's stream waits on nothing of rank 0 but the
  // collective. A later rank-0 read on another stream is not ordered by rank 1's completion.
  TraceBuilder run(2);
  for (int i = 0; i < 2; ++i) {
    RankTraceBuilder& r = run.rank(i);
    StreamId s1 = r.stream("comm stream"), s2 = r.stream("other stream");
    uint64_t buf = r.alloc(1024, "buf");
    r.all_reduce(s1, buf, buf, 256, TraceBuilder::comm(0));
    r.kernel(s2, "reader", {reads(buf, 1024)});
  }
  auto res = analyze_in_memory(run);
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.kind == "ncclAllReduce");
  CHECK(res.findings[0].occurrences == 2);
}

TEST_CASE("ranks disagreeing on collective k of a communicator get no cross-rank edge", "[rules][nccl-cross-rank]") {
  // As `transitive(true)`, but rank 1's first call on communicator A is a broadcast where
  // rank 0 issued an all-reduce: the calls do not match, so nothing flows through rank 1.
  TransitiveRun t;
  t.a1 = Call{NcclKind::Broadcast, 0};
  TraceBuilder run = transitive(t);
  auto res = analyze_in_memory(run);
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].second.name == "consumer");
  REQUIRE(res.warnings.size() == 1);
  CHECK(res.warnings[0].find("differ between ranks") != std::string::npos);
}

namespace {
void require_producer_consumer_race(const AnalysisResult& res) {
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.name == "producer");
  CHECK(res.findings[0].second.name == "consumer");
}
}  // namespace

TEST_CASE("a broadcast's root does not wait for the other ranks", "[rules][nccl-cross-rank]") {
  // The root only sends: its call can end before a receiver's call has started, so rank 1
  // (the root of A) learns nothing of rank 0's producer through A.
  require_producer_consumer_race(
      analyze_in_memory(transitive_rooted(NcclKind::Broadcast, 1, NcclKind::AllReduce, -1)));
}

TEST_CASE("a reduce's other ranks do not wait for the root", "[rules][nccl-cross-rank]") {
  // Rank 0 only sends its contribution to B's root (rank 1): its call can end before rank
  // 1's call has started.
  require_producer_consumer_race(analyze_in_memory(transitive_rooted(NcclKind::AllReduce, -1, NcclKind::Reduce, 1)));
}

TEST_CASE("a reduce's root waits for every rank and a broadcast's receivers for the root",
          "[rules][nccl-cross-rank]") {
  auto res = analyze_in_memory(transitive_rooted(NcclKind::Reduce, 1, NcclKind::Broadcast, 1));
  CHECK(res.findings.empty());
  CHECK(res.warnings.empty());
}
