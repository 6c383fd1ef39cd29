#include <catch2/catch.hpp>

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

TEST_CASE("interval map: visit clips to the asked range", "[shadow]") {
  Map m;
  set(m, 0, 100, 4);
  std::vector<std::tuple<uint64_t, uint64_t, int>> seen;
  m.visit(40, 60, [&](uint64_t a, uint64_t b, const Val& x) { seen.emplace_back(a, b, x.v); });
  CHECK(seen == std::vector<std::tuple<uint64_t, uint64_t, int>>{{40, 60, 4}});
  CHECK(m.size() == 1);  // visiting does not split
}
