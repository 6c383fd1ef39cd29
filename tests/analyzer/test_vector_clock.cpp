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
