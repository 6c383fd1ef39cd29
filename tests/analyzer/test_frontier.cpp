// Frontiers (one allocation per frontier, direct lookup when they span ranks 0..n-1) and the
// collective matcher's recycled pending calls.
#include <catch2/catch.hpp>

#include <vector>

#include "clock/frontier.h"
#include "engine/collective_matcher.h"

using namespace streamhaz;
using namespace streamhaz::analysis;

namespace {

VectorClock clock_of(std::vector<ClockValue> values) {
  VectorClock c;
  for (size_t i = 0; i < values.size(); ++i) c.set(static_cast<TimelineId>(i), values[i]);
  return c;
}

std::vector<ClockValue> entry(const Frontier& f, uint32_t rank) {
  const auto [values, n] = f.of(rank);
  return std::vector<ClockValue>(values, values + n);
}

trace::Nccl all_reduce(uint32_t rank, uint32_t nranks, uint64_t seq) {
  trace::Nccl n;
  n.kind = trace::NcclKind::AllReduce;
  n.count = 4;
  n.comm = 77;
  n.rank = rank;
  n.nranks = nranks;
  n.comm_seq = seq;
  return n;
}

}  // namespace

TEST_CASE("frontier: entries by rank, dense and sparse, merged by pointwise maximum", "[clock][frontier]") {
  FrontierBuilder b;
  b.start(0);
  b.add(1, clock_of({0, 4}));
  b.add(0, clock_of({2}));
  b.add(2, clock_of({}));  // knows nothing yet, but takes part
  const FrontierRef dense = b.build();
  CHECK(dense->ranks() == 3);
  CHECK(entry(*dense, 0) == std::vector<ClockValue>{2});
  CHECK(entry(*dense, 1) == std::vector<ClockValue>{0, 4});
  CHECK(entry(*dense, 2) == std::vector<ClockValue>{0});
  CHECK(entry(*dense, 3).empty());

  b.start(0);
  b.add(5, clock_of({1, 1, 9}));
  b.add(1, clock_of({3, 1}));
  b.add(dense);  // merged in: rank 1 takes the maximum, ranks 0 and 2 come along
  const FrontierRef sparse = b.build();
  CHECK(sparse->ranks() == 4);
  CHECK(entry(*sparse, 0) == std::vector<ClockValue>{2});
  CHECK(entry(*sparse, 1) == std::vector<ClockValue>{3, 4});
  CHECK(entry(*sparse, 5) == std::vector<ClockValue>{1, 1, 9});
  CHECK(entry(*sparse, 3).empty());
  CHECK(entry(*sparse, 9).empty());
  CHECK(sparse->covers(dense->id()));
  CHECK(sparse->covers(sparse->id()));
  CHECK_FALSE(dense->covers(sparse->id()));
}

TEST_CASE("frontier: drop_covered keeps the first of equals and drops what a merge contains", "[clock][frontier]") {
  FrontierBuilder b;
  std::vector<FrontierRef> made;
  for (uint32_t r = 0; r < 70; ++r) {  // past 64: the other marking path
    b.start(0);
    b.add(r, clock_of({r + 1}));
    made.push_back(b.build());
  }
  b.start(0);
  b.add(made[0]);
  b.add(made[1]);
  const FrontierRef both = b.build();

  std::vector<FrontierRef> set{made[0], both, made[2], made[1], made[2]};
  drop_covered(set);
  CHECK(set == std::vector<FrontierRef>{both, made[2]});

  std::vector<FrontierRef> many = made;
  many.push_back(both);
  many.push_back(made[69]);
  drop_covered(many);
  REQUIRE(many.size() == 69);  // made[0] and made[1] (in `both`) and the second made[69] dropped
  CHECK(many.front() == made[2]);
  CHECK(many.back() == both);
}

TEST_CASE("collective matcher: many calls in flight, completed out of order, recycle their entries",
          "[cross-rank][matcher]") {
  CollectiveMatcher m;
  constexpr uint64_t kCalls = 40;  // more than the matcher keeps for reuse
  // Rank 0 posts every call first: all wait for rank 1.
  for (uint64_t s = 1; s <= kCalls; ++s) CHECK(m.post(0, all_reduce(0, 2, s), clock_of({ClockValue(s)}), {}));
  // Rank 1 posts them from the last to the first: each completes at once.
  for (uint64_t s = kCalls; s >= 1; --s)
    CHECK_FALSE(m.post(1, all_reduce(1, 2, s), clock_of({0, ClockValue(100 + s)}), {}));
  CHECK(m.take_woken().size() == kCalls);
  // Taken in order but for 3 before 2: the matcher's record of completed calls has a gap.
  std::vector<uint64_t> order;
  for (uint64_t s = 1; s <= kCalls; ++s) order.push_back(s);
  std::swap(order[1], order[2]);
  for (uint64_t s : order) {
    for (uint32_t r = 0; r < 2; ++r) {
      VectorClock joined;
      const FrontierRef got = m.take({77, s}, r, r, {}, joined);
      REQUIRE(got);
      // Each rank's own entry: its own start (a rank learns itself back from the call).
      CHECK(joined == (r == 0 ? clock_of({ClockValue(s)}) : clock_of({0, ClockValue(100 + s)})));
    }
  }
  CHECK_FALSE(m.irregular());
  // Calls after a recycled entry start fresh: a later call resolves on its own posts.
  CHECK(m.post(0, all_reduce(0, 2, kCalls + 1), clock_of({7}), {}));
  CHECK_FALSE(m.post(1, all_reduce(1, 2, kCalls + 1), clock_of({0, 8}), {}));
  VectorClock joined;
  CHECK(m.take({77, kCalls + 1}, 0, 0, {}, joined));
  CHECK(joined == clock_of({7}));
  CHECK_FALSE(m.irregular());
  // A completed key posted again is irregular input (2 and 3 as well: the gap closed).
  CHECK(m.post(0, all_reduce(0, 2, 3), clock_of({1}), {}));
  CHECK(m.irregular());
}

TEST_CASE("replicated matcher: frontiers no rank holds are reported and forgotten", "[cross-rank][matcher][sharded]") {
  CollectiveMatcher m(CollectiveMatcher::Clocks::Projected, /*replicated=*/true);
  CHECK(m.post(0, all_reduce(0, 2, 1), clock_of({1}), {}));
  CHECK(m.post(1, all_reduce(1, 2, 1), clock_of({0, 2}), {}));
  for (const PostRecord& p : m.take_outbox()) m.apply(p);  // every process applies every post
  VectorClock c0, c1;
  FrontierRef k0 = m.take({77, 1}, 0, 0, {}, c0);
  FrontierRef k1 = m.take({77, 1}, 1, 1, {}, c1);
  REQUIRE(k0);
  CHECK(k0 == k1);
  CHECK(m.frontiers_kept() == 1);
  CHECK(m.unused_frontiers().empty());  // the ranks' receipts hold it

  // The next call names it as known: the posts keep it alive until they resolve.
  std::vector<Known> known{k0};
  CHECK(m.post(0, all_reduce(0, 2, 2), clock_of({3}), known));
  CHECK(m.post(1, all_reduce(1, 2, 2), clock_of({0, 4}), known));
  for (const PostRecord& p : m.take_outbox()) m.apply(p);
  FrontierRef n0 = m.take({77, 2}, 0, 0, known, c0);
  FrontierRef n1 = m.take({77, 2}, 1, 1, known, c1);
  REQUIRE(n0);
  CHECK(n0->covers(k0->id()));
  const uint64_t old_id = k0->id();
  k0.reset();
  k1.reset();
  CHECK(m.unused_frontiers().empty());  // `known` still holds it
  known.clear();
  CHECK(m.unused_frontiers() == std::vector<uint64_t>{old_id});
  m.forget_frontiers({old_id});
  CHECK(m.frontiers_kept() == 1);
  CHECK(m.unused_frontiers().empty());
}
