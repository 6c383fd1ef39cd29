#include <catch2/catch.hpp>

#include <random>
#include <tuple>
#include <vector>

#include "shadow/interval_map.h"

using namespace streamhaz::analysis;

namespace {
struct Val {
  int v = 0;
  bool empty() const { return v == 0; }
  bool operator==(const Val&) const = default;
};
using Map = IntervalMap<Val>;
std::vector<std::tuple<uint64_t, uint64_t, int>> dump(const Map& m) {
  std::vector<std::tuple<uint64_t, uint64_t, int>> out;
  for (const auto& [start, cell] : m.cells()) out.emplace_back(start, cell.end, cell.value.v);
  return out;
}
void set(Map& m, uint64_t lo, uint64_t hi, int v) {
  m.update(lo, hi, [&](uint64_t, uint64_t, Val& x) { x.v = v; });
}
}  // namespace

TEST_CASE("interval map: update fills gaps and splits partial overlaps", "[shadow]") {
  Map m;
  set(m, 10, 20, 1);
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{10, 20, 1}});
  set(m, 15, 30, 2);
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{10, 15, 1}, {15, 30, 2}});
  set(m, 0, 12, 3);
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{0, 12, 3}, {12, 15, 1}, {15, 30, 2}});
}

TEST_CASE("interval map: visits each piece once, gaps included", "[shadow]") {
  Map m;
  set(m, 10, 20, 1);
  set(m, 30, 40, 2);
  std::vector<std::tuple<uint64_t, uint64_t, int>> seen;
  m.update(5, 35, [&](uint64_t a, uint64_t b, Val& x) {
    seen.emplace_back(a, b, x.v);
    x.v = 9;
  });
  CHECK(seen == std::vector<std::tuple<uint64_t, uint64_t, int>>{{5, 10, 0}, {10, 20, 1}, {20, 30, 0}, {30, 35, 2}});
  // Equal neighbours merged back into one range.
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{5, 35, 9}, {35, 40, 2}});
}

TEST_CASE("interval map: equal neighbours merge, emptied ranges disappear", "[shadow]") {
  Map m;
  set(m, 0, 10, 1);
  set(m, 10, 20, 2);
  set(m, 20, 30, 1);
  CHECK(m.size() == 3);
  set(m, 10, 20, 1);
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{0, 30, 1}});
  set(m, 5, 25, 0);  // clearing a middle part splits the range in two
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{0, 5, 1}, {25, 30, 1}});
  m.erase(0, 27);
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{27, 30, 1}});
}

// The map against one value per byte: every update visits each byte of its range once, with
// the value it had, and the map stays the fewest ranges (equal neighbours merged, no empties).
TEST_CASE("interval map: random updates and erases agree with a byte-by-byte model", "[shadow]") {
  constexpr uint64_t kBytes = 64;
  std::mt19937 rng(25);
  Map m;
  std::vector<int> model(kBytes, 0);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t lo = rng() % kBytes, hi = lo + 1 + rng() % (kBytes - lo);
    if (rng() % 8 == 0) {
      m.erase(lo, hi);
      std::fill(model.begin() + lo, model.begin() + hi, 0);
    } else {
      const int v = static_cast<int>(rng() % 3);  // few values: neighbours often equal, 0 empties
      std::vector<int> seen(kBytes, -1);
      uint64_t next = lo;
      m.update(lo, hi, [&](uint64_t a, uint64_t b, Val& x) {
        REQUIRE(a == next);  // in address order, nothing skipped or visited twice
        REQUIRE(a < b);
        for (uint64_t i = a; i < b; ++i) seen[i] = x.v;
        next = b;
        x.v = v;
      });
      REQUIRE(next == hi);
      for (uint64_t i = lo; i < hi; ++i) REQUIRE(seen[i] == model[i]);
      std::fill(model.begin() + lo, model.begin() + hi, v);
    }
    std::vector<std::tuple<uint64_t, uint64_t, int>> fewest;
    for (uint64_t i = 0; i < kBytes; ++i) {
      if (!model[i]) continue;
      if (!fewest.empty() && std::get<1>(fewest.back()) == i && std::get<2>(fewest.back()) == model[i])
        std::get<1>(fewest.back()) = i + 1;
      else
        fewest.emplace_back(i, i + 1, model[i]);
    }
    REQUIRE(dump(m) == fewest);
  }
}

TEST_CASE("interval map: visit clips to the asked range", "[shadow]") {
  Map m;
  set(m, 0, 100, 4);
  std::vector<std::tuple<uint64_t, uint64_t, int>> seen;
  m.visit(40, 60, [&](uint64_t a, uint64_t b, const Val& x) { seen.emplace_back(a, b, x.v); });
  CHECK(seen == std::vector<std::tuple<uint64_t, uint64_t, int>>{{40, 60, 4}});
  CHECK(m.size() == 1);  // visiting does not split
}

TEST_CASE("interval map: nodes from its own pool, reused after erasing; copies are independent", "[shadow]") {
  Map m;
  for (uint64_t i = 0; i < 600; ++i) set(m, 10 * i, 10 * i + 5, int(i % 7) + 1);  // past several blocks
  CHECK(m.size() == 600);
  m.erase(0, 3000);
  CHECK(m.size() == 300);
  for (uint64_t i = 0; i < 300; ++i) set(m, 10 * i, 10 * i + 5, 9);  // from the freed nodes
  CHECK(m.size() == 600);

  Map copy = m;
  set(copy, 0, 6000, 4);
  CHECK(dump(copy) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{0, 6000, 4}});
  CHECK(m.size() == 600);
  CHECK(std::get<2>(dump(m).front()) == 9);
  m = copy;
  copy.erase(0, 6000);
  CHECK(dump(m) == std::vector<std::tuple<uint64_t, uint64_t, int>>{{0, 6000, 4}});
  CHECK(copy.size() == 0);
}

TEST_CASE("node pool: one slot size from the pool, larger requests from the heap", "[shadow]") {
  NodePool pool;
  void* a = pool.allocate(40);
  void* b = pool.allocate(40);
  CHECK(a != b);
  pool.deallocate(a, 40);
  CHECK(pool.allocate(40) == a);  // the freed slot first
  void* big = pool.allocate(4096);
  pool.deallocate(big, 4096);
  pool.deallocate(b, 40);
}
