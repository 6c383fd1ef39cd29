// Cross-rank order with per-rank clocks: order that leaves a rank through one collective and
// comes back only through collectives between other ranks must still be found (projected
// frontiers), exactly as the dense all-rank clocks find it; and checking ranks on several
// threads gives the one-thread findings in the same order.
#include <catch2/catch.hpp>

#include <random>

#include "scenario.h"

using namespace streamhaz::testing;

namespace {

// A chain of collectives around `world` ranks: rank i and rank i+1 share communicator i.
// Rank 0 writes `buf` on stream 1 and calls collective 0 there; every other rank i takes part
// in collective i-1 on one stream and, ordered after it by an event unless `broken` is i, in
// collective i on another; rank 0 takes part in the last collective on stream 2 and then reads
// `buf` there. Only through the whole chain is the read ordered after the write.
struct Chain {
  int world = 3;
  int broken = -1;  // the rank that does not order its two calls
  NcclKind kind = NcclKind::AllReduce;
  bool roots_forward = true;  // rooted kinds: the root is the rank the order comes from
};

TraceBuilder chain(const Chain& c) {
  TraceBuilder run(c.world);
  const bool rooted = c.kind == NcclKind::Broadcast || c.kind == NcclKind::Reduce;
  // Communicator i joins rank i (group rank 0) and rank i+1 (group rank 1). A broadcast flows
  // from its root, a reduce to its root.
  auto root_of = [&](bool forward) {
    if (!rooted) return -1;
    const bool from_low = c.kind == NcclKind::Broadcast;
    return (forward == from_low) ? 0 : 1;
  };
  const int root = root_of(c.roots_forward);
  for (int i = 0; i < c.world; ++i) {
    RankTraceBuilder& r = run.rank(i);
    StreamId s1 = r.stream("stream 1"), s2 = r.stream("stream 2");
    uint64_t buf = r.alloc(1024, "buf"), x = r.alloc(1024, "x"), y = r.alloc(1024, "y");
    const uint64_t comm_in = TraceBuilder::comm((i + c.world - 1) % c.world), comm_out = TraceBuilder::comm(i);
    if (i == 0) {
      r.kernel(s1, "producer", {writes(buf, 1024)});
      r.nccl_in_group(s1, c.kind, x, x, 64, comm_out, 0, 2, root);
      r.nccl_in_group(s2, c.kind, y, y, 64, comm_in, 1, 2, root);
      r.kernel(s2, "consumer", {reads(buf, 1024)});
      continue;
    }
    EventId e = r.event();
    r.nccl_in_group(s1, c.kind, x, x, 64, comm_in, 1, 2, root);
    r.record(e, s1);
    if (c.broken != i) r.wait(s2, e);
    r.nccl_in_group(s2, c.kind, y, y, 64, comm_out, 0, 2, root);
  }
  return run;
}

AnalysisOptions with(bool dense, unsigned jobs, unsigned run_ahead = AnalysisOptions{}.run_ahead) {
  AnalysisOptions o;
  o.dense_clocks = dense;
  o.jobs = jobs;
  o.run_ahead = run_ahead;
  o.run_ahead_from_ranks = 2;
  o.backfill_timings = false;
  return o;
}

// Everything a finding says that the analysis decides.
std::vector<std::string> summary(const AnalysisResult& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    std::string ranks;
    for (int k : f.ranks) ranks += std::to_string(k) + ",";
    out.push_back(f.key + " #" + std::to_string(f.occurrences) + " ranks " + ranks + " seq " +
                  std::to_string(f.first.seq) + "/" + std::to_string(f.second.seq) + " rank " +
                  std::to_string(f.first.rank) + " bytes " + std::to_string(f.buffer.offset) + "+" +
                  std::to_string(f.buffer.bytes));
  }
  for (const std::string& w : r.warnings) out.push_back("warning: " + w);
  return out;
}

}  // namespace

TEST_CASE("order that returns to a rank only through collectives of two other ranks is found",
          "[cross-rank][projection]") {
  const auto kind = GENERATE(NcclKind::AllReduce, NcclKind::AllGather, NcclKind::Broadcast, NcclKind::Reduce);
  const int world = GENERATE(3, 5);
  const bool dense = GENERATE(false, true);
  CAPTURE(kind, world, dense);
  Chain c;
  c.world = world;
  c.kind = kind;
  const AnalysisResult ordered = analyze_in_memory(chain(c), with(dense, 1));
  CHECK(ordered.findings.empty());
  CHECK(ordered.warnings.empty());
  // Any rank of the chain that does not order its two calls breaks it: the read races.
  for (int broken = 1; broken < world; ++broken) {
    c.broken = broken;
    const AnalysisResult res = analyze_in_memory(chain(c), with(dense, 1));
    REQUIRE(res.findings.size() == 1);
    CHECK(res.findings[0].first.name == "producer");
    CHECK(res.findings[0].second.name == "consumer");
    CHECK(res.findings[0].ranks == std::vector<int>{0});
  }
}

TEST_CASE("a rooted collective carries order only from its root", "[cross-rank][projection]") {
  // The same chain with every root on the wrong side: a broadcast's receivers learn nothing of
  // the non-root, and a reduce's non-root learns nothing at all.
  const auto kind = GENERATE(NcclKind::Broadcast, NcclKind::Reduce);
  const bool dense = GENERATE(false, true);
  CAPTURE(kind, dense);
  Chain c;
  c.kind = kind;
  c.roots_forward = false;
  const AnalysisResult res = analyze_in_memory(chain(c), with(dense, 1));
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].second.name == "consumer");
}

TEST_CASE("in-memory records and trace files give the same analysis", "[cross-rank][in-memory]") {
  Chain c;
  c.world = 4;
  c.broken = 2;
  CHECK(summary(analyze_in_memory(chain(c), with(false, 1))) ==
        summary(analyze_run(chain(c), with(false, 1))));
}

namespace {

// A random job: `world` ranks, three streams each, events recorded and waited at random,
// kernels on four shared buffers, collectives of random kinds on the whole job and on random
// pairs of ranks, issued by every member in one global order (so the job never deadlocks).
TraceBuilder random_job(uint32_t seed, int world) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  TraceBuilder run(world);
  struct RankState {
    std::vector<StreamId> streams;
    std::vector<uint64_t> bufs;
    std::vector<EventId> events;
    std::vector<bool> recorded;
  };
  std::vector<RankState> st(world);
  for (int i = 0; i < world; ++i) {
    RankTraceBuilder& r = run.rank(i);
    for (int s = 0; s < 3; ++s) st[i].streams.push_back(r.stream("s" + std::to_string(s)));
    for (int b = 0; b < 4; ++b) st[i].bufs.push_back(r.alloc(256, "b" + std::to_string(b)));
    for (int e = 0; e < 3; ++e) st[i].events.push_back(r.event());
    st[i].recorded.assign(3, false);
  }
  auto local_work = [&](int i, int n) {
    RankTraceBuilder& r = run.rank(i);
    RankState& s = st[i];
    for (int k = 0; k < n; ++k) {
      const StreamId stream = s.streams[pick(3)];
      switch (pick(6)) {
        case 0:
        case 1: {
          const uint64_t b = s.bufs[pick(4)];
          r.kernel(stream, "k", {pick(2) ? writes(b, 256) : reads(b, 256)});
          break;
        }
        case 2: {
          const int e = pick(3);
          r.record(s.events[e], stream);
          s.recorded[e] = true;
          break;
        }
        case 3:
        case 4: {
          const int e = pick(3);
          if (s.recorded[e]) r.wait(stream, s.events[e]);
          break;
        }
        default:
          if (pick(4) == 0) r.stream_sync(stream);
          break;
      }
    }
  };
  const NcclKind kinds[] = {NcclKind::AllReduce, NcclKind::AllGather, NcclKind::ReduceScatter, NcclKind::Broadcast,
                            NcclKind::Reduce};
  std::map<std::vector<int>, int> comm_of;  // member set -> communicator number
  const int calls = 6 + pick(6);
  for (int i = 0; i < world; ++i) local_work(i, 2 + pick(4));
  for (int call = 0; call < calls; ++call) {
    std::vector<int> members;
    if (pick(3) == 0) {
      for (int i = 0; i < world; ++i) members.push_back(i);
    } else {
      const int a = pick(world);
      int b = pick(world - 1);
      if (b >= a) ++b;
      members = {std::min(a, b), std::max(a, b)};
    }
    auto [it, fresh] = comm_of.try_emplace(members, static_cast<int>(comm_of.size()));
    const NcclKind kind = kinds[pick(5)];
    const bool rooted = kind == NcclKind::Broadcast || kind == NcclKind::Reduce;
    const int root = rooted ? pick(static_cast<int>(members.size())) : -1;
    const int buffer = pick(4);
    for (size_t g = 0; g < members.size(); ++g) {
      const int i = members[g];
      RankTraceBuilder& r = run.rank(i);
      const uint64_t b = st[i].bufs[buffer];
      r.nccl_in_group(st[i].streams[pick(3)], kind, b, b, 16, TraceBuilder::comm(it->second),
                      static_cast<uint32_t>(g), static_cast<uint32_t>(members.size()), root);
      local_work(i, 1 + pick(4));
    }
  }
  for (int i = 0; i < world; ++i) local_work(i, 3);
  return run;
}

}  // namespace

TEST_CASE("projected clocks find exactly what the dense clocks find, on any number of threads",
          "[cross-rank][projection][property]") {
  // Each random job is checked six ways (projected clocks with ranks running ahead of up to
  // 16 collectives, of 1, or waiting at each); a difference names the seed to replay.
  int with_findings = 0;
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    const int world = 2 + static_cast<int>(seed % 5);
    const TraceBuilder run = random_job(seed, world);
    const auto reference = summary(analyze_in_memory(run, with(true, 1)));
    CAPTURE(seed, world);
    CHECK(summary(analyze_in_memory(run, with(false, 1))) == reference);
    CHECK(summary(analyze_in_memory(run, with(false, 3))) == reference);
    CHECK(summary(analyze_in_memory(run, with(false, 1, 0))) == reference);
    CHECK(summary(analyze_in_memory(run, with(false, 2, 1))) == reference);
    CHECK(summary(analyze_in_memory(run, with(true, 2))) == reference);
    with_findings += !reference.empty();
  }
  // The jobs are not trivially clean: most have races, whose cross-rank order decides them.
  CHECK(with_findings > 100);
}

TEST_CASE("several threads report the same findings in the same order as one", "[cross-rank][jobs]") {
  // The ZeRO-2 shape on eight ranks, without the per-buffer wait: races on every rank.
  TraceBuilder run(8);
  for (int i = 0; i < 8; ++i) {
    RankTraceBuilder& r = run.rank(i);
    StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream");
    uint64_t ipg = r.alloc(4096, "ipg_buffer"), grad = r.alloc(4096, "grad");
    EventId ready = r.event();
    for (int step = 0; step < 5; ++step) {
      r.kernel(compute, "backward", {writes(grad, 4096)});
      r.memcpy(compute, ipg, grad, 4096);
      r.record(ready, compute);
      r.wait(reduction, ready);
      r.all_reduce(reduction, ipg, ipg, 1024, TraceBuilder::comm(0));
    }
  }
  const auto one = summary(analyze_in_memory(run, with(false, 1)));
  REQUIRE(!one.empty());
  for (unsigned jobs : {2u, 3u, 8u, 0u}) {
    CAPTURE(jobs);
    CHECK(summary(analyze_in_memory(run, with(false, jobs))) == one);
    CHECK(summary(analyze_run(run, with(false, jobs))) == summary(analyze_run(run, with(false, 1))));
  }
}
