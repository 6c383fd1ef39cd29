// SeqTable (streamhaz/analysis/seq_table.h): the replay's per-seq values, an array over a span
// and a map beside it, held to std::map on random seqs in and out of the span.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "streamhaz/analysis/seq_table.h"

namespace streamhaz::testing {
namespace {

using analysis::SeqTable;

std::vector<std::pair<uint64_t, int>> entries(const SeqTable<int>& t) {
  std::vector<std::pair<uint64_t, int>> out;
  t.for_each([&](uint64_t seq, int v) { out.push_back({seq, v}); });
  return out;
}

std::vector<std::pair<uint64_t, int>> entries(const std::map<uint64_t, int>& m) { return {m.begin(), m.end()}; }

TEST_CASE("seq table: holds what a map holds, in seq order, spanned or not", "[seq_table]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    SeqTable<int> table;
    std::map<uint64_t, int> reference;
    const uint64_t lo = 100 + rng() % 50, hi = lo + rng() % 200;
    if (round % 5) table.span(lo, hi);  // every fifth table has no span: all in its map
    std::uniform_int_distribution<uint64_t> seq(0, hi + 100);  // below, inside and above the span
    for (int i = 0; i < 300; ++i) {
      const uint64_t s = seq(rng);
      const int v = static_cast<int>(rng() % 1000);
      if (rng() % 3 == 0) {
        CHECK(table.contains(s) == reference.count(s) > 0);
        if (reference.count(s)) CHECK(table.at(s) == reference.at(s));
        else CHECK_THROWS_AS(table.at(s), std::out_of_range);
        continue;
      }
      table[s] = v;
      reference[s] = v;
      if (i == 150 && round % 2) table.span(lo / 2, hi + 50);  // a wider span keeps every entry
    }
    CHECK(table.size() == reference.size());
    CHECK(entries(table) == entries(reference));
    // Entries are changed in place through find.
    for (auto& [s, v] : reference) {
      int* p = table.find(s);
      REQUIRE(p);
      *p = v + 1;
      ++v;
    }
    CHECK(entries(table) == entries(reference));
  }
}

TEST_CASE("seq table: operator[] makes a zero entry once; an empty span holds nothing", "[seq_table]") {
  SeqTable<int> t;
  t.span(10, 5);  // hi < lo: no span
  CHECK(t.empty());
  t.span(10, 12);
  CHECK(t.empty());
  CHECK(t.find(11) == nullptr);
  CHECK(t[11] == 0);
  CHECK(t[11] == 0);
  CHECK(t[0] == 0);
  CHECK(t.size() == 2);
  CHECK(entries(t) == std::vector<std::pair<uint64_t, int>>{{0, 0}, {11, 0}});
}

}  // namespace
}  // namespace streamhaz::testing
