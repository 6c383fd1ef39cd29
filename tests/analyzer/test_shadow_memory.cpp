#include <catch2/catch.hpp>

#include "shadow/shadow_memory.h"

using namespace streamhaz::analysis;
using streamhaz::trace::AccessMode;

namespace {
OpStamp op(uint64_t seq, TimelineId t, ClockValue c) {
  OpStamp s;
  s.seq = seq;
  s.epoch = {t, c};
  return s;
}
}  // namespace

TEST_CASE("shadow: unordered write after read on overlapping bytes is one conflict", "[shadow]") {
  ShadowMemory sh;
  std::vector<Conflict> out;
  VectorClock a, b;
  a.tick(0);
  sh.access(0, 100, AccessMode::Read, op(1, 0, 1), a, out);
  CHECK(out.empty());
  b.tick(1);
  sh.access(50, 150, AccessMode::Write, op(2, 1, 1), b, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].first.seq == 1);
  CHECK(out[0].first_role == AccessMode::Read);
  CHECK(out[0].lo == 50);
  CHECK(out[0].hi == 100);
}

TEST_CASE("shadow: ordered accesses and disjoint bytes do not conflict", "[shadow]") {
  ShadowMemory sh;
  std::vector<Conflict> out;
  VectorClock a;
  a.tick(0);
  sh.access(0, 100, AccessMode::Write, op(1, 0, 1), a, out);
  VectorClock b;
  b.tick(1);
  sh.access(100, 200, AccessMode::Write, op(2, 1, 1), b, out);  // adjacent, not overlapping
  CHECK(out.empty());
  b.join(a);  // now b knows op 1
  sh.access(0, 200, AccessMode::Read, op(3, 1, 2), b, out);
  CHECK(out.empty());
}

TEST_CASE("shadow: two reads never conflict; a write conflicts with every unordered reader", "[shadow]") {
  ShadowMemory sh;
  std::vector<Conflict> out;
  VectorClock r1, r2, w;
  r1.tick(0);
  r2.tick(1);
  sh.access(0, 64, AccessMode::Read, op(1, 0, 1), r1, out);
  sh.access(0, 64, AccessMode::Read, op(2, 1, 1), r2, out);
  CHECK(out.empty());
  w.tick(2);
  w.join(r1);  // ordered after reader 1 only
  sh.access(0, 64, AccessMode::Write, op(3, 2, 1), w, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].first.seq == 2);
}

TEST_CASE("shadow: an operation never races with itself (in-place read and write)", "[shadow]") {
  ShadowMemory sh;
  std::vector<Conflict> out;
  VectorClock c;
  c.tick(0);
  sh.access(0, 64, AccessMode::Read, op(1, 0, 1), c, out);
  sh.access(0, 64, AccessMode::Write, op(1, 0, 1), c, out);
  CHECK(out.empty());
}

TEST_CASE("shadow: a write replaces history and the ranges merge", "[shadow]") {
  ShadowMemory sh;
  std::vector<Conflict> out;
  VectorClock c;
  for (uint64_t i = 0; i < 8; ++i) {
    const Epoch e = c.tick(0);
    sh.access(i * 10, i * 10 + 10, AccessMode::Read, op(i + 1, 0, e.clock), c, out);
  }
  CHECK(sh.cells().size() == 8);
  const Epoch e = c.tick(0);
  sh.access(0, 80, AccessMode::Write, op(100, 0, e.clock), c, out);
  CHECK(out.empty());
  CHECK(sh.cells().size() == 1);
}

TEST_CASE("shadow: release checks like a write and forgets", "[shadow]") {
  ShadowMemory sh;
  std::vector<Conflict> out;
  VectorClock gpu, host;
  gpu.tick(0);
  host.tick(1);
  sh.access(0, 64, AccessMode::Write, op(1, 0, 1), gpu, out);
  sh.release(0, 64, op(2, 1, 1), host, out);
  CHECK(out.size() == 1);  // the host did not wait for the write
  CHECK(sh.cells().size() == 0);
}

TEST_CASE("shadow: an access meeting many earlier operations notes each once, bytes spanned, in the order met",
          "[shadow]") {
  // 40 writers of their own 16 bytes each, written twice in two halves of memory (one operation's
  // bytes apart): a later write over all of it meets each writer once, past the notes' scan.
  ShadowMemory sh;
  std::vector<Conflict> out;
  constexpr uint64_t kWriters = 40, kHalf = 4096;
  for (uint64_t i = 0; i < kWriters; ++i) {
    VectorClock w;
    w.tick(static_cast<TimelineId>(i));
    sh.access(16 * i, 16 * i + 16, AccessMode::Write, op(i + 1, static_cast<TimelineId>(i), 1), w, out);
    sh.access(kHalf + 16 * i, kHalf + 16 * i + 8, AccessMode::Write, op(i + 1, static_cast<TimelineId>(i), 1), w,
              out);
  }
  VectorClock last;
  last.tick(100);
  sh.access(0, 2 * kHalf, AccessMode::Write, op(1000, 100, 1), last, out);
  REQUIRE(out.size() == kWriters);
  for (uint64_t i = 0; i < kWriters; ++i) {
    CHECK(out[i].first.seq == i + 1);
    CHECK(out[i].first_role == AccessMode::Write);
    CHECK(out[i].lo == 16 * i);
    CHECK(out[i].hi == kHalf + 16 * i + 8);
  }
}
