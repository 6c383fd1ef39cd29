#include <catch2/catch.hpp>

#include "clock/vector_clock.h"

using namespace streamhaz::analysis;

TEST_CASE("vector clock: tick advances only its own timeline", "[clock]") {
  VectorClock c;
  CHECK(c.get(3) == 0);
  Epoch e = c.tick(2);
  CHECK(e == Epoch{2, 1});
  CHECK(c.tick(2) == Epoch{2, 2});
  CHECK(c.get(0) == 0);
  CHECK(c.covers(Epoch{2, 2}));
  CHECK_FALSE(c.covers(Epoch{2, 3}));
  CHECK_FALSE(c.covers(Epoch{0, 1}));
}

TEST_CASE("vector clock: join is a pointwise maximum and reports growth", "[clock]") {
  VectorClock a, b;
  a.set(0, 5);
  a.set(1, 1);
  b.set(1, 3);
  b.set(4, 2);
  CHECK(a.join(b));
  CHECK(a.get(0) == 5);
  CHECK(a.get(1) == 3);
  CHECK(a.get(4) == 2);
  CHECK_FALSE(a.join(b));  // nothing new
  VectorClock c;
  c.set(0, 5);
  c.set(1, 3);
  c.set(4, 2);
  CHECK(a == c);
  c.set(7, 0);  // trailing zeros do not make clocks differ
  CHECK(a == c);
}

TEST_CASE("timeline registry numbers timelines densely", "[clock]") {
  TimelineRegistry r;
  CHECK(r.add() == 0);
  CHECK(r.add() == 1);
  CHECK(r.count() == 2);
}

TEST_CASE("vector clock: components past the inline ones move to the heap and back", "[clock]") {
  constexpr TimelineId kLong = VectorClock::kInline * 4 + 3;
  VectorClock small, big;
  small.set(1, 7);
  for (TimelineId t = 0; t < kLong; ++t) big.set(t, t + 1);
  CHECK(big.size() == kLong);
  CHECK(big.get(kLong - 1) == kLong);

  VectorClock copy = big;  // heap to a fresh clock
  CHECK(copy == big);
  copy = small;  // a heap clock takes an inline one: only the first components count
  CHECK(copy == small);
  CHECK(copy.get(kLong - 1) == 0);
  small = big;  // an inline clock takes a heap one
  CHECK(small == big);

  VectorClock moved = std::move(big);
  CHECK(moved.get(kLong - 1) == kLong);
  CHECK(big.size() == 0);  // NOLINT(bugprone-use-after-move): a moved-from clock is empty
  big.tick(2);
  CHECK(big.get(2) == 1);

  // Joining grows an inline clock past its inline room; clearing keeps no stale values.
  VectorClock j;
  j.set(0, 1);
  CHECK(j.join(moved));
  CHECK(j == moved);
  j.clear();
  CHECK(j.size() == 0);
  j.tick(VectorClock::kInline + 1);
  CHECK(j.get(0) == 0);
  CHECK(j.get(VectorClock::kInline) == 0);
  CHECK(j.get(VectorClock::kInline + 1) == 1);
}

TEST_CASE("witness sets: knowledge that came through one site alone rests on it", "[clock][witness]") {
  // Timeline 0 is stream A, 1 is stream B. B waits (site 1) for an event of A at A's tick 2.
  VectorClock a, b;
  a.tick(0);
  a.tick(0);
  b.tick(1);
  CHECK(b.join_via(a, EdgeSites{1}));
  std::vector<SiteId> sites;
  b.sites_needed_for(Epoch{0, 2}, sites);
  CHECK(sites == std::vector<SiteId>{1});
  CHECK(b.rests_on_sites(Epoch{0, 1}));
  CHECK_FALSE(b.rests_on_sites(Epoch{1, 1}));  // its own past rests on nothing
  CHECK(b.sites_floor(0) == 0);  // every tick of A it knows rests on a site
  CHECK(b.sites_floor(1) == 1);  // none of its own

  // A second route to A's tick 1 only (site 2): without site 1, B still knows tick 1.
  VectorClock c;
  c.tick(2);
  VectorClock a1;
  a1.tick(0);
  CHECK(c.join_via(a1, EdgeSites{2}));
  CHECK(b.join(c));  // a plain edge from C (the values of C's timeline grow)
  sites.clear();
  b.sites_needed_for(Epoch{0, 1}, sites);
  CHECK(sites.empty());  // tick 1 arrives through site 1 or through site 2: neither alone is needed
  sites.clear();
  b.sites_needed_for(Epoch{0, 2}, sites);
  CHECK(sites == std::vector<SiteId>{1});  // tick 2 only through site 1
  CHECK(b.sites_floor(0) == 1);  // above tick 1, A's ticks rest on a site

  // A route to tick 2 through no site at all: nothing is needed any more, and the join says the
  // clock changed although no value grew (a lazily joined host must be joined again).
  CHECK(b.join(a));
  CHECK_FALSE(b.rests_on_sites(Epoch{0, 2}));
  CHECK(b.sites_floor(0) == 2);

  // Copies carry the sets; clearing drops them.
  VectorClock d;
  d.join_via(a, EdgeSites{3});
  VectorClock e = d;
  CHECK(e.rests_on_sites(Epoch{0, 2}));
  e.clear();
  CHECK_FALSE(e.rests_on_sites(Epoch{0, 2}));
}

TEST_CASE("witness sets: two sites in a row are both needed", "[clock][witness]") {
  VectorClock a, b, c;
  a.tick(0);
  b.join_via(a, EdgeSites{1});  // B waits for A (site 1)
  b.tick(1);
  c.join_via(b, EdgeSites{2});  // C waits for B (site 2)
  std::vector<SiteId> sites;
  c.sites_needed_for(Epoch{0, 1}, sites);
  CHECK(sites == std::vector<SiteId>{1, 2});
  sites.clear();
  c.sites_needed_for(Epoch{1, 1}, sites);
  CHECK(sites == std::vector<SiteId>{2});
  // The same site twice on one route is one site: removing it removes both edges.
  VectorClock d;
  d.join_via(b, EdgeSites{1});
  sites.clear();
  d.sites_needed_for(Epoch{0, 1}, sites);
  CHECK(sites == std::vector<SiteId>{1});
}

TEST_CASE("witness sets: a group of sites removed together is needed where no route avoids all of them",
          "[clock][witness]") {
  // B learns A's tick through site 1 and, again, through site 2; both belong to group 9.
  VectorClock a, b;
  a.tick(0);
  b.join_via(a, EdgeSites{1, 9});
  b.join_via(a, EdgeSites{2, 9});
  std::vector<SiteId> sites;
  b.sites_needed_for(Epoch{0, 1}, sites);
  CHECK(sites == std::vector<SiteId>{9});  // neither site alone, but the group
  // A route through no site at all: not even the group is needed.
  b.join(a);
  CHECK_FALSE(b.rests_on_sites(Epoch{0, 1}));
}
