// The access and phantom indexes (shadow/access_index.h, shadow/phantom_index.h): per timeline, what
// a phantom over all memory has to meet; and shadow memory answering a phantom through them exactly
// as the walk over every cell does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "shadow/access_index.h"
#include "shadow/phantom_index.h"
#include "shadow/shadow_memory.h"

using namespace streamhaz::analysis;
using streamhaz::trace::AccessMode;

namespace {

// An operation of the stream whose timeline is `t` (its stream slot too).
OpStamp op(uint64_t seq, TimelineId t, ClockValue c, uint8_t flags = 0) {
  OpStamp s;
  s.seq = seq;
  s.epoch = {t, c};
  s.stream_slot = t;
  s.flags = flags;
  return s;
}

// What one meet() handed over: (seq, lo, hi) of the unordered and of the covered reads, and every
// lookup of where a read is held.
struct Met {
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> unordered, covered;
  std::vector<uint64_t> looked_up;
};

// `held`: per seq, the bytes shadow memory still holds of it (absent: none).
Met meet(AccessIndex& index, const VectorClock& now, bool covered_too,
         const std::map<uint64_t, std::pair<uint64_t, uint64_t>>& held) {
  Met m;
  index.meet(
      now, covered_too,
      [&](const OpStamp& r, uint64_t lo, uint64_t hi, HeldSpan& span) {
        m.looked_up.push_back(r.seq);
        if (auto it = held.find(r.seq); it != held.end())
          span.add(std::max(lo, it->second.first), std::min(hi, it->second.second));
      },
      [&](const OpStamp& r, const HeldSpan& s) { m.unordered.emplace_back(r.seq, s.lo, s.hi); },
      [&](const OpStamp& r, const HeldSpan& s) { m.covered.emplace_back(r.seq, s.lo, s.hi); });
  return m;
}

using Triples = std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>;

}  // namespace

TEST_CASE("access index: the unordered reads, then the newest covered one still held", "[shadow][access_index]") {
  AccessIndex index;
  index.add(op(1, 0, 1), 0, 10);
  index.add(op(2, 0, 2), 10, 20);
  index.add(op(2, 0, 2), 40, 50);  // a second range of the same read
  index.add(op(3, 0, 3), 20, 30);
  index.add(op(4, 1, 1), 30, 40);
  CHECK(index.size() == 5);
  VectorClock now;  // knows timeline 0 up to 2, nothing of timeline 1
  now.set(0, 2);
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> held{{1, {0, 10}}, {2, {0, 100}}, {3, {0, 100}}, {4, {0, 100}}};

  Met m = meet(index, now, true, held);
  CHECK(m.unordered == Triples{{3, 20, 30}, {4, 30, 40}});
  CHECK(m.covered == Triples{{2, 10, 50}});  // both ranges; read 1 is older: not looked at
  CHECK(std::count(m.looked_up.begin(), m.looked_up.end(), 1) == 0);

  // Without the covered ones: only the unordered are looked up.
  m = meet(index, now, false, held);
  CHECK(m.covered.empty());
  CHECK(std::count(m.looked_up.begin(), m.looked_up.end(), 2) == 0);

  // Read 2 gone (its bytes written since): the next older one held answers, and read 2 is dropped
  // for good.
  held.erase(2);
  m = meet(index, now, true, held);
  CHECK(m.covered == Triples{{1, 0, 10}});
  CHECK(index.size() == 3);
  held[2] = {0, 100};  // nothing brings a read back; were it held again, the index no longer knows it
  m = meet(index, now, true, held);
  CHECK(m.covered == Triples{{1, 0, 10}});
  CHECK(std::count(m.looked_up.begin(), m.looked_up.end(), 2) == 0);
}

TEST_CASE("access index: reads of graph operations are all met; reads out of clock order find their place",
          "[shadow][access_index]") {
  AccessIndex index;
  index.add(op(1, 0, 1, kOpInGraph), 0, 8);
  index.add(op(2, 0, 2, kOpInGraph), 8, 16);
  index.add(op(5, 0, 5), 16, 24);
  index.add(op(4, 0, 4), 24, 32);  // late: goes before 5
  VectorClock now;
  now.set(0, 4);
  const std::map<uint64_t, std::pair<uint64_t, uint64_t>> held{{1, {0, 64}}, {2, {0, 64}}, {4, {0, 64}}, {5, {0, 64}}};
  const Met m = meet(index, now, true, held);
  CHECK(m.unordered == Triples{{5, 16, 24}});
  CHECK(m.covered == Triples{{1, 0, 8}, {2, 8, 16}, {4, 24, 32}});
}

TEST_CASE("phantom index: the phantoms above the floor still kept; replaced ones leave `latest` only",
          "[shadow][access_index]") {
  PhantomIndex index;
  auto fence = [](OpStamp p) {
    p.flags |= kOpLastingPhantom;
    return p;
  };
  index.add(op(1, 0, 1), 0, UINT64_MAX);
  index.add(fence(op(2, 0, 2)), 0, UINT64_MAX);
  index.add(op(3, 0, 3), 0, 64);  // a phantom's own footprint first...
  index.replaced_in_latest(op(3, 0, 3));
  index.add(op(3, 0, 3), 0, UINT64_MAX);  // ...then all memory: phantom 1 leaves every `latest`
  index.add(op(4, 1, 1), 0, UINT64_MAX);
  std::set<uint64_t> kept_nowhere;
  auto met = [&](const OpStamp& self, PhantomIndex::List list, ClockValue floor0, ClockValue floor1) {
    std::vector<uint64_t> seen;
    index.meet(
        self, list, [&](TimelineId t) { return t == 0 ? floor0 : floor1; },
        [&](const OpStamp& p, uint64_t, uint64_t) {
          if (seen.empty() || seen.back() != p.seq) seen.push_back(p.seq);
          return !kept_nowhere.count(p.seq);
        });
    return seen;
  };
  const OpStamp self = op(9, 2, 1);
  CHECK(met(self, PhantomIndex::List::Latest, 0, 0) == std::vector<uint64_t>{3, 2, 4});
  CHECK(met(self, PhantomIndex::List::All, 0, 0) == std::vector<uint64_t>{3, 2, 1, 4});
  CHECK(met(self, PhantomIndex::List::All, 2, 1) == std::vector<uint64_t>{3});  // at or below the floor: not met
  CHECK(met(op(3, 0, 3), PhantomIndex::List::All, 0, 1) == std::vector<uint64_t>{2, 1});  // never itself
  // Kept nowhere (written over): gone for good from both lists.
  CHECK(index.size() == 5);
  kept_nowhere.insert(2);
  CHECK(met(self, PhantomIndex::List::All, 0, 0) == std::vector<uint64_t>{3, 2, 1, 4});
  CHECK(index.size() == 4);
  kept_nowhere.clear();
  CHECK(met(self, PhantomIndex::List::All, 0, 0) == std::vector<uint64_t>{3, 1, 4});
  CHECK(met(self, PhantomIndex::List::Latest, 0, 0) == std::vector<uint64_t>{3, 4});
}

namespace {

// A pair as the engine keeps a phantom's ordered ones (rank_engine_memory.cpp, gather_latest): per
// timeline the latest operation that is neither a graph's nor a phantom, roles and bytes merged;
// the others as they come.
using Kept = std::set<std::tuple<uint64_t, int, uint64_t, uint64_t>>;  // seq, role, lo, hi
Kept latest_per_timeline(const std::vector<Conflict>& ordered) {
  std::map<TimelineId, Conflict> latest;
  Kept kept;
  for (const Conflict& c : ordered) {
    if (c.first.flags & (kOpInGraph | kOpPhantom)) {
      kept.insert({c.first.seq, int(c.first_role), c.lo, c.hi});
      continue;
    }
    auto [it, fresh] = latest.try_emplace(c.first.epoch.timeline, c);
    Conflict& l = it->second;
    if (fresh || l.first.epoch.clock > c.first.epoch.clock) continue;
    if (l.first == c.first) {
      l.first_role = static_cast<AccessMode>(uint8_t(l.first_role) | uint8_t(c.first_role));
      l.lo = std::min(l.lo, c.lo);
      l.hi = std::max(l.hi, c.hi);
    } else {
      l = c;
    }
  }
  for (const auto& [t, c] : latest) kept.insert({c.first.seq, int(c.first_role), c.lo, c.hi});
  return kept;
}
Kept all_of(const std::vector<Conflict>& pairs) {
  Kept k;
  for (const Conflict& c : pairs) k.insert({c.first.seq, int(c.first_role), c.lo, c.hi});
  return k;
}

}  // namespace

TEST_CASE("access and phantom indexes: a phantom over all memory meets through them what the walk over every cell meets",
          "[shadow][access_index][property]") {
  int phantoms = 0, with_ordered = 0, with_unordered_reads = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
    ShadowMemory indexed, walked;
    const bool keep_all = pick(4) != 0;
    for (ShadowMemory* sh : {&indexed, &walked}) {
      sh->expect_phantoms(true);
      sh->keep_all_readers(keep_all);
    }
    walked.walk_for_phantoms(true);
    constexpr TimelineId kStreams = 4;
    std::vector<VectorClock> clocks(kStreams);
    for (TimelineId t = 0; t < kStreams; ++t) clocks[t].tick(t);
    uint64_t seq = 0;
    std::vector<Conflict> out_i, out_w, ord_i, ord_w;
    for (int step = 0; step < 120; ++step) {
      const TimelineId t = pick(kStreams);
      switch (pick(10)) {
        case 0:
        case 1: {  // a synchronisation: through a site, or plain
          const TimelineId from = pick(kStreams);
          if (from != t) clocks[t].join_via(clocks[from], EdgeSites{pick(3)});
          break;
        }
        case 2: {  // a phantom over all memory, now and then a fence or a graph's kernel
          const OpStamp p = op(++seq, t, clocks[t].tick(t).clock, pick(6) == 0 ? kOpInGraph : 0);
          const auto kind = pick(4) == 0 ? ShadowMemory::Phantom::Lasting : ShadowMemory::Phantom::Yes;
          const auto scope = p.flags & kOpInGraph ? ShadowMemory::Ordered::All : ShadowMemory::Ordered::LatestPerTimeline;
          const bool trace_sites = pick(4) != 0;
          if (pick(3) == 0) {  // its footprint first (a kernel with pointer arguments), or a phantom of some bytes only
            const uint64_t lo = 32 * pick(40), hi = lo + 32 * (1 + pick(4));
            indexed.access(lo, hi, AccessMode::ReadWrite, p, clocks[t], out_i, trace_sites ? &ord_i : nullptr, kind, scope);
            walked.access(lo, hi, AccessMode::ReadWrite, p, clocks[t], out_w, trace_sites ? &ord_w : nullptr, kind, scope);
            CHECK(all_of(out_i) == all_of(out_w));
            if (pick(2)) break;
          }
          indexed.access(0, UINT64_MAX, AccessMode::ReadWrite, p, clocks[t], out_i, trace_sites ? &ord_i : nullptr, kind,
                         scope);
          walked.access(0, UINT64_MAX, AccessMode::ReadWrite, p, clocks[t], out_w, trace_sites ? &ord_w : nullptr, kind,
                        scope);
          ++phantoms;
          CHECK(all_of(out_i) == all_of(out_w));
          if (std::any_of(out_w.begin(), out_w.end(), [](const Conflict& c) { return c.first_role == AccessMode::Read; }))
            ++with_unordered_reads;
          if (trace_sites) {
            const Kept ki = scope == ShadowMemory::Ordered::All ? all_of(ord_i) : latest_per_timeline(ord_i);
            const Kept kw = scope == ShadowMemory::Ordered::All ? all_of(ord_w) : latest_per_timeline(ord_w);
            CHECK(ki == kw);
            if (!kw.empty()) ++with_ordered;
          }
          break;
        }
        case 3:
          if (pick(3) == 0) {  // memory freed and allocated again
            const uint64_t lo = 64 * pick(16), hi = lo + 64 * (1 + pick(4));
            indexed.forget(lo, hi);
            walked.forget(lo, hi);
          }
          break;
        default: {  // an access of some buffer
          const OpStamp a = op(++seq, t, clocks[t].tick(t).clock, pick(8) == 0 ? kOpInGraph : 0);
          const uint64_t lo = 32 * pick(32), hi = lo + 32 * (1 + pick(8));
          const AccessMode mode = pick(3) == 0 ? AccessMode::Write : AccessMode::Read;
          const int ranges = pick(4) == 0 ? 2 : 1;  // one operation, two ranges now and then
          for (int r = 0; r < ranges; ++r) {
            const uint64_t shift = 512 * r;
            indexed.access(lo + shift, hi + shift, mode, a, clocks[t], out_i);
            walked.access(lo + shift, hi + shift, mode, a, clocks[t], out_w);
            CHECK(all_of(out_i) == all_of(out_w));
          }
          break;
        }
      }
    }
    CHECK(indexed.cells().size() == walked.cells().size());
  }
  // The runs are not trivial.
  CHECK(phantoms > 1000);
  CHECK(with_ordered > 300);
  CHECK(with_unordered_reads > 300);
}
