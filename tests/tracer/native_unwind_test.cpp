// The native unwinder's learned walks against libgcc's own, on this thread's real stack:
// every call walks both (check period 1) and the unwinder counts where they differ.
#include <alloca.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>

#include "native_frames.h"

using namespace streamhaz::tracer;
using namespace streamhaz::tracer::glue;

namespace {

ModuleMap& modules() {
  static ModuleMap* m = [] {
    auto* map = new ModuleMap;
    map->refresh();
    return map;
  }();
  return *m;
}

// Functions with frames of several sizes; `sink` keeps the arrays alive.
volatile char sink;

__attribute__((noinline)) size_t leaf(RawFrame* out) {
  size_t n = unwind_program_frames(modules(), out, 24);
  sink = char(n);
  return n;
}
__attribute__((noinline)) size_t small_frame(int depth, RawFrame* out);
__attribute__((noinline)) size_t large_frame(int depth, RawFrame* out) {
  volatile char pad[512];
  pad[0] = char(depth);
  size_t n = depth <= 0 ? leaf(out) : small_frame(depth - 1, out);
  sink = pad[0];
  return n;
}
__attribute__((noinline)) size_t small_frame(int depth, RawFrame* out) {
  volatile char pad[24];
  pad[0] = char(depth);
  size_t n = depth <= 0 ? leaf(out) : (depth % 3 == 0 ? large_frame(depth - 1, out) : small_frame(depth - 1, out));
  sink = pad[0];
  return n;
}
// A frame whose size changes from call to call.
__attribute__((noinline)) size_t dynamic_frame(size_t bytes, int depth, RawFrame* out) {
  volatile char* pad = static_cast<volatile char*>(alloca(bytes));
  pad[0] = char(depth);
  size_t n = small_frame(depth, out);
  sink = pad[0];
  return n;
}

// Callers of one chain with frames of one size (one function per tag): walks from them start at
// the same depth.
template <char Tag> __attribute__((noinline)) size_t via(RawFrame* out) {
  volatile char pad[40];
  pad[0] = Tag;
  size_t n = small_frame(3, out);
  sink = pad[0];
  return n;
}

}  // namespace

TEST_CASE("native unwinding: learned walks give libgcc's frames on fixed-size frames") {
  set_unwind_check_period(1);
  const UnwindCounts before = unwind_counts();
  RawFrame frames[24];
  for (int round = 0; round < 20; ++round)
    for (int depth = 0; depth < 12; ++depth) CHECK(small_frame(depth, frames) > size_t(depth));
  const UnwindCounts after = unwind_counts();
  CHECK(after.checked - before.checked > 100);  // most walks could be made fast, and were checked
  CHECK(after.differed == before.differed);
  set_unwind_check_period(256);
}

TEST_CASE("native unwinding: without checks, the walks are fast and give the same frames") {
  RawFrame walks[2][24];
  size_t n[2];
  UnwindCounts before;
  int rounds = 2;
  asm("" : "+r"(rounds));  // a trip count the compiler cannot see: one call site, not unrolled
  for (int i = 0; i < rounds; ++i) {  // the second walk meets only learned frames
    set_unwind_check_period(i == 0 ? 1 : 0);
    before = unwind_counts();
    n[i] = small_frame(7, walks[i]);
  }
  CHECK(unwind_counts().fast == before.fast + 1);
  REQUIRE(n[0] == n[1]);
  for (size_t i = 0; i < n[0]; ++i) CHECK(walks[0][i].key == walks[1][i].key);
  set_unwind_check_period(256);
}

TEST_CASE("native unwinding: a frame whose size changes is found out and walked slowly from then on") {
  set_unwind_check_period(1);
  const UnwindCounts before = unwind_counts();
  RawFrame frames[24];
  for (int round = 0; round < 40; ++round) dynamic_frame(64 + 16 * size_t(round % 5), 4, frames);
  const UnwindCounts mid = unwind_counts();
  // At most the first change of size could differ before it was marked.
  CHECK(mid.differed - before.differed <= 1);
  RawFrame walks[2][24];
  size_t n[2];
  int rounds = 2;
  asm("" : "+r"(rounds));  // one call site, as above
  for (int i = 0; i < rounds; ++i) {  // the changing frame is walked slowly either way
    set_unwind_check_period(i == 0 ? 0 : 1);
    n[i] = dynamic_frame(400, 4, walks[i]);
  }
  REQUIRE(n[0] == n[1]);
  for (size_t i = 0; i < n[0]; ++i) CHECK(walks[0][i].key == walks[1][i].key);
  set_unwind_check_period(256);
}

TEST_CASE("native unwinding: a learned walk that holds 12 frames ends at a frame whose size changes") {
  set_unwind_check_period(1);
  RawFrame frames[24];
  // The changing frame lies under 15 fixed ones: learned, and marked as varying.
  for (int round = 0; round < 10; ++round) dynamic_frame(64 + 16 * size_t(round % 5), 14, frames);
  RawFrame walks[2][24];
  size_t n[2];
  UnwindCounts before[2], after[2];
  int rounds = 2;
  asm("" : "+r"(rounds));  // one call site, as above
  for (int i = 0; i < rounds; ++i) {  // libgcc's whole walk, then the learned one that ends early
    set_unwind_check_period(i == 0 ? 1 : 0);
    before[i] = unwind_counts();
    // Another size the second time: not the place the first walk saw the frame at.
    n[i] = dynamic_frame(i == 0 ? 400 : 432, 14, walks[i]);
    after[i] = unwind_counts();
  }
  CHECK(after[1].truncated == before[1].truncated + 1);
  CHECK(after[1].slow == before[1].slow);
  // The early end is the whole walk's beginning, up to and including the changing frame.
  REQUIRE(n[1] >= 12);
  REQUIRE(n[1] < n[0]);
  for (size_t i = 0; i < n[1]; ++i) CHECK(walks[0][i].key == walks[1][i].key);
  set_unwind_check_period(256);
}

TEST_CASE("native unwinding: a failed learned walk is counted by its cause") {
  set_unwind_check_period(1);
  RawFrame frames[24];
  for (int round = 0; round < 10; ++round) dynamic_frame(64 + 16 * size_t(round % 5), 2, frames);
  set_unwind_check_period(0);
  const UnwindCounts before = unwind_counts();
  dynamic_frame(400, 2, frames);  // the changing frame within the first 12: libgcc walks it
  const UnwindCounts after = unwind_counts();
  CHECK(after.failed_varies == before.failed_varies + 1);
  CHECK(after.slow == before.slow + 1);
  set_unwind_check_period(256);
}

TEST_CASE("native unwinding: a frame of varying size is stepped over where this thread's last slow walk saw it") {
  set_unwind_check_period(1);
  RawFrame frames[24];
  for (int round = 0; round < 10; ++round) dynamic_frame(64 + 16 * size_t(round % 5), 2, frames);
  RawFrame walks[3][24];
  size_t n[3];
  UnwindCounts before[3], after[3];
  int rounds = 3;
  asm("" : "+r"(rounds));  // one call site: the same return addresses every round
  for (int i = 0; i < rounds; ++i) {  // libgcc's walk, then learned walks at the same and another place
    set_unwind_check_period(i == 0 ? 1 : 0);
    before[i] = unwind_counts();
    n[i] = dynamic_frame(i == 2 ? 432 : 400, 2, walks[i]);
    after[i] = unwind_counts();
  }
  CHECK(after[1].slow == before[1].slow);
  CHECK(after[1].through_varying == before[1].through_varying + 1);
  CHECK(after[1].truncated == before[1].truncated);
  REQUIRE(n[1] == n[0]);
  for (size_t i = 0; i < n[0]; ++i) CHECK(walks[0][i].key == walks[1][i].key);
  // Elsewhere on the stack (another alloca size under the same frame): libgcc again.
  CHECK(after[2].slow == before[2].slow + 1);
  CHECK(after[2].failed_varies == before[2].failed_varies + 1);
  REQUIRE(n[2] == n[0]);
  for (size_t i = 0; i < n[0]; ++i) CHECK(walks[0][i].key == walks[2][i].key);
  set_unwind_check_period(256);
}

TEST_CASE("native unwinding: other threads walk their own stacks") {
  set_unwind_check_period(1);
  const UnwindCounts before = unwind_counts();
  std::thread t([] {
    RawFrame frames[24];
    for (int i = 0; i < 50; ++i) small_frame(i % 9, frames);
  });
  t.join();
  CHECK(unwind_counts().differed == before.differed);
  set_unwind_check_period(256);
}

TEST_CASE("native unwinding: a walk recalls what the thread's last walk from its depth read, up to where they part") {
  constexpr int kRounds = 10;
  RawFrame walks[kRounds][24];
  size_t n[kRounds];
  UnwindCounts before[kRounds], after[kRounds];
  int rounds = kRounds;
  asm("" : "+r"(rounds));  // one call site per caller: the same return addresses every round
  for (int i = 0; i < rounds; ++i) {  // a, b, a, b...: the same depth, the other caller each time
    // Learned (and checked against libgcc) in the first rounds, then learned walks alone, then
    // checked again.
    set_unwind_check_period(i < 2 || i >= 8 ? 1 : 0);
    before[i] = unwind_counts();
    n[i] = i % 2 == 0 ? via<'a'>(walks[i]) : via<'b'>(walks[i]);
    after[i] = unwind_counts();
  }
  for (int i = 3; i < 8; ++i) {
    CHECK(after[i].slow == before[i].slow);
    // The frames below the callers are recalled; from the caller on they are asked again.
    CHECK(after[i].frames_recalled - before[i].frames_recalled >= 5);
    CHECK(after[i].frames_asked > before[i].frames_asked);
  }
  for (int i = 8; i < kRounds; ++i) {  // libgcc agrees with walks that recall
    CHECK(after[i].checked == before[i].checked + 1);
    CHECK(after[i].differed == before[i].differed);
    CHECK(after[i].frames_recalled > before[i].frames_recalled);
  }
  bool parted = false;
  for (int r = 2; r < kRounds; ++r) {
    REQUIRE(n[r] == n[r % 2]);
    for (size_t i = 0; i < n[r]; ++i) CHECK(walks[r][i].key == walks[r % 2][i].key);
  }
  for (size_t i = 0; i < std::min(n[0], n[1]); ++i) parted = parted || walks[0][i].key != walks[1][i].key;
  CHECK(parted);
  set_unwind_check_period(256);
}
