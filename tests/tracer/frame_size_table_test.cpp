#include "streamhaz/tracer/frame_size_table.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <thread>
#include <vector>

using namespace streamhaz::tracer;

namespace {

// A fake stack: words at byte offsets, addresses as the walker sees them.
struct FakeStack {
  std::vector<uint64_t> words = std::vector<uint64_t>(512, 0);
  uint64_t at(size_t byte) const { return reinterpret_cast<uint64_t>(words.data()) + byte; }
  void put(size_t byte, uint64_t value) { std::memcpy(reinterpret_cast<char*>(words.data()) + byte, &value, 8); }
  uint64_t lo() const { return at(0); }
  uint64_t hi() const { return at(words.size() * 8); }
};

auto keep_all = [](uint64_t, size_t) { return true; };

}  // namespace

TEST_CASE("frame sizes: learned once, found, and marked when they differ") {
  FrameSizeTable t(8);
  CHECK(t.find(0x1000) == FrameSizeTable::kUnknown);
  CHECK(t.learn(0x1000, 48));
  CHECK(t.find(0x1000) == 48);
  CHECK(t.learn(0x1000, 48));  // the same again
  CHECK_FALSE(t.learn(0x1000, 64));
  CHECK(t.find(0x1000) == FrameSizeTable::kVaries);
  CHECK(t.learn(0x1000, 48));  // stays marked
  CHECK(t.find(0x1000) == FrameSizeTable::kVaries);
  t.learn_outermost(0x2000);
  CHECK(t.find(0x2000) == FrameSizeTable::kOutermost);
  CHECK(t.learn(0x3000, FrameSizeTable::kMaxSize + 1));
  CHECK(t.find(0x3000) == FrameSizeTable::kVaries);  // too large to trust
}

TEST_CASE("frame sizes: forgetting all makes every address unknown, and they can be learned again") {
  FrameSizeTable t(8);
  t.learn(0x1000, 48);
  t.learn(0x1010, 32);
  t.forget_all();
  CHECK(t.find(0x1000) == FrameSizeTable::kUnknown);
  CHECK(t.learn(0x1000, 64));  // another object at that address: another size, no conflict
  CHECK(t.find(0x1000) == 64);
}

TEST_CASE("frame sizes: a full table refuses to learn rather than overwrite") {
  FrameSizeTable t(4);  // 16 slots
  for (uint64_t ip = 1; ip <= 64; ++ip) t.learn(ip * 16, 32);
  size_t known = 0;
  for (uint64_t ip = 1; ip <= 64; ++ip) known += t.find(ip * 16) == 32;
  CHECK(known == 16);
  CHECK(t.learned() == 16);
}

TEST_CASE("frame sizes: learned from many threads at once, every size is found") {
  FrameSizeTable t(14);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&t, k] {
      for (uint64_t i = 0; i < 2000; ++i) t.learn(0x400000 + 16 * (i * 4 + k), uint32_t(16 + 8 * (i % 7)));
    });
  for (auto& th : threads) th.join();
  for (int k = 0; k < 4; ++k)
    for (uint64_t i = 0; i < 2000; ++i) REQUIRE(t.find(0x400000 + 16 * (i * 4 + k)) == 16 + 8 * (i % 7));
}

TEST_CASE("learned walk: return addresses read at cfa - 8, frame by frame, to the outermost") {
  FakeStack st;
  FrameSizeTable t(8);
  // Frames: cfa0 = 64; A's return address at 56, A is 96 bytes; B at 152, 32 bytes; C at 184,
  // outermost.
  st.put(56, 0xA0);
  st.put(152, 0xB0);
  st.put(184, 0xC0);
  t.learn(0xA0, 96);
  t.learn(0xB0, 32);
  t.learn_outermost(0xC0);
  uint64_t ips[16];
  LearnedWalk w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all);
  REQUIRE(w.ok);
  REQUIRE(w.n == 3);
  CHECK(ips[0] == 0xA0);
  CHECK(ips[1] == 0xB0);
  CHECK(ips[2] == 0xC0);

  SECTION("stops at max kept addresses, not counting those keep() refuses") {
    auto skip_a = [](uint64_t ip, size_t kept) { return kept > 0 || ip != 0xA0; };
    w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 1, skip_a);
    REQUIRE(w.ok);
    CHECK(w.n == 2);
  }
  SECTION("an address with no size fails the walk") {
    st.put(152, 0xBAD);
    CHECK_FALSE(walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all).ok);
  }
  SECTION("a size that varies fails the walk") {
    t.learn(0xB0, 40);
    CHECK_FALSE(walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all).ok);
  }
  SECTION("a CFA past the stack's end fails the walk, without reading there") {
    t.forget_all();
    t.learn(0xA0, 1u << 20);
    CHECK_FALSE(walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all).ok);
  }
  SECTION("a zero return address ends the stack") {
    st.put(152, 0);
    w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all);
    REQUIRE(w.ok);
    CHECK(w.n == 1);
  }
}

TEST_CASE("learned walk: ends at a frame of no usable size once it holds enough frames") {
  FakeStack st;
  FrameSizeTable t(8);
  st.put(56, 0xA0);   // A: 96 bytes
  st.put(152, 0xB0);  // B: varies
  st.put(184, 0xC0);
  t.learn(0xA0, 96);
  t.learn(0xB0, 32);
  t.learn(0xB0, 40);  // B seen with two sizes
  t.learn_outermost(0xC0);
  uint64_t ips[16];
  SECTION("the frame of no size is the truncate_at-th kept: kept, and the walk ends there") {
    LearnedWalk w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, 2);
    REQUIRE(w.ok);
    CHECK(w.truncated);
    REQUIRE(w.n == 2);
    CHECK(ips[0] == 0xA0);
    CHECK(ips[1] == 0xB0);
  }
  SECTION("fewer frames kept before it: the walk fails, for the slow unwinder") {
    CHECK_FALSE(walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, 3).ok);
  }
  SECTION("a frame keep() refuses does not count toward truncate_at") {
    auto skip_a = [](uint64_t ip, size_t kept) { return kept > 0 || ip != 0xA0; };
    CHECK_FALSE(walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, skip_a, 2).ok);
  }
  SECTION("an unknown address ends it the same way") {
    st.put(152, 0xBAD);
    LearnedWalk w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, 2);
    REQUIRE(w.ok);
    CHECK(w.truncated);
    CHECK(ips[1] == 0xBAD);
  }
}

TEST_CASE("learned walk: a frame of varying size is stepped over where this thread saw it before") {
  FakeStack st;
  FrameSizeTable t(8);
  st.put(56, 0xA0);   // A: 96 bytes, callee CFA 64
  st.put(152, 0xB0);  // B: varies; this time 32 bytes, callee CFA 160
  st.put(184, 0xC0);  // C: outermost
  t.learn(0xA0, 96);
  t.learn(0xB0, 32);
  t.learn(0xB0, 40);
  t.learn_outermost(0xC0);
  uint64_t ips[16];
  VaryingFrameSizes seen;
  SECTION("seen at this callee CFA with this caller: the walk goes on to the outermost") {
    seen.remember(0xB0, st.at(160), 32, 0xC0);
    LearnedWalk w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, SIZE_MAX, &seen);
    REQUIRE(w.ok);
    CHECK_FALSE(w.truncated);
    CHECK(w.varying == 1);
    REQUIRE(w.n == 3);
    CHECK(ips[2] == 0xC0);
  }
  SECTION("without what the thread saw, it fails as before") {
    CHECK_FALSE(walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, SIZE_MAX, &seen).ok);
  }
  SECTION("seen at another callee CFA: not used") {
    seen.remember(0xB0, st.at(168), 32, 0xC0);
    CHECK_FALSE(walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, SIZE_MAX, &seen).ok);
  }
  SECTION("the caller's return address is no longer where it was: the walk fails, or ends there") {
    seen.remember(0xB0, st.at(160), 32, 0xC1);
    LearnedWalk w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, SIZE_MAX, &seen);
    CHECK_FALSE(w.ok);
    CHECK(w.failed_on == FrameSizeTable::kVaries);
    w = walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, keep_all, 2, &seen);
    REQUIRE(w.ok);
    CHECK(w.truncated);
    CHECK(w.n == 2);
  }
  SECTION("the newest sighting of a place replaces the older; the oldest places give way to new ones") {
    seen.remember(0xB0, st.at(160), 40, 0xC0);
    seen.remember(0xB0, st.at(160), 32, 0xC0);
    CHECK(seen.find(0xB0, st.at(160)).size == 32);
    for (uint64_t i = 0; i < VaryingFrameSizes::kEntries; ++i) seen.remember(0xD000 + i, 64, 16, 0);
    CHECK(seen.find(0xB0, st.at(160)).size == 0);
    CHECK(seen.find(0xD000 + VaryingFrameSizes::kEntries - 1, 64).size == 16);
  }
}

TEST_CASE("learned walk: a thread's recent walks answer for the frames they share with this one") {
  FakeStack st;
  FrameSizeTable t(8);
  st.put(56, 0xA0);   // A: 96 bytes, the CUDA plumbing
  st.put(152, 0xB0);  // B: 32 bytes
  st.put(184, 0xC0);  // C: outermost
  t.learn(0xA0, 96);
  t.learn(0xB0, 32);
  t.learn_outermost(0xC0);
  size_t asks = 0;
  auto skip_a = [&asks](uint64_t ip, size_t kept) {
    ++asks;
    return kept > 0 || ip != 0xA0;
  };
  RecentWalks recent;
  uint64_t ips[16];
  auto walk = [&](uint64_t keep_version = 0) {
    asks = 0;
    return walk_learned_frames(t, st.at(64), st.lo(), st.hi(), ips, 16, 16, skip_a, SIZE_MAX, nullptr, &recent,
                               keep_version);
  };
  LearnedWalk first = walk();
  REQUIRE(first.ok);
  CHECK(first.n == 3);
  CHECK(first.first_kept == 1);
  CHECK(first.asked == 3);
  CHECK(first.recalled == 0);

  SECTION("the same walk again: every answer recalled, keep() not asked") {
    LearnedWalk again = walk();
    REQUIRE(again.ok);
    CHECK(again.n == 3);
    CHECK(again.first_kept == 1);
    CHECK(again.recalled == 3);
    CHECK(again.asked == 0);
    CHECK(asks == 0);
    CHECK(ips[0] == 0xA0);
    CHECK(ips[2] == 0xC0);
  }
  SECTION("another caller from the second frame on: the first recalled, the rest asked, and left for the next") {
    st.put(152, 0xB1);  // B': 40 bytes, then D outermost
    st.put(192, 0xD0);
    t.learn(0xB1, 40);
    t.learn_outermost(0xD0);
    // Learning changed the table: nothing is recalled until a walk has read it again.
    LearnedWalk other = walk();
    REQUIRE(other.ok);
    CHECK(other.recalled == 0);
    REQUIRE(other.n == 3);
    CHECK(ips[1] == 0xB1);
    CHECK(ips[2] == 0xD0);
    st.put(152, 0xB0);  // back to B: A recalled, B and C asked
    LearnedWalk back = walk();
    REQUIRE(back.ok);
    CHECK(back.recalled == 1);
    CHECK(back.asked == 2);
    CHECK(ips[2] == 0xC0);
    CHECK(walk().recalled == 3);
  }
  SECTION("a size marked as varying since: not recalled, and the walk fails as without them") {
    t.learn(0xB0, 40);
    LearnedWalk changed = walk();
    CHECK_FALSE(changed.ok);
    CHECK(changed.failed_on == FrameSizeTable::kVaries);
    CHECK(changed.recalled == 0);
  }
  SECTION("every size forgotten since: not recalled") {
    t.forget_all();
    CHECK_FALSE(walk().ok);
  }
  SECTION("keep() answering otherwise since (its version changed): not recalled, keep() asked again") {
    LearnedWalk asked = walk(/*keep_version=*/1);
    REQUIRE(asked.ok);
    CHECK(asked.recalled == 0);
    CHECK(asks == 3);
    CHECK(walk(1).recalled == 3);
    CHECK(asks == 0);
  }
  SECTION("a walk from another depth does not use them") {
    // A start elsewhere on the stack whose depth falls in the same slot, reading A's address first.
    size_t start = 256;
    while (&recent.slot(st.hi() - st.at(start)) != &recent.slot(st.hi() - st.at(64))) start += 16;
    REQUIRE(start + 96 < st.words.size() * 8);
    st.put(start - 8, 0xA0);
    LearnedWalk deeper = walk_learned_frames(t, st.at(start), st.lo(), st.hi(), ips, 16, 16, skip_a,
                                             SIZE_MAX, nullptr, &recent);
    CHECK(deeper.recalled == 0);
  }
  SECTION("a walk that ended at a frame of no size leaves that answer, and a size learned later is used") {
    st.put(152, 0xBAD);
    CHECK_FALSE(walk().ok);
    CHECK_FALSE(walk().ok);  // recalled as unknown, as the table says
    t.learn(0xBAD, 32);
    LearnedWalk learned = walk();
    REQUIRE(learned.ok);
    CHECK(learned.recalled == 0);
    CHECK(ips[1] == 0xBAD);
  }
}
