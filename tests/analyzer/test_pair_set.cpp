// PairSet (analyzer/src/sync/pair_set.h): the pass's sorted-vector set of conflicting pairs,
// held to std::set on random pairs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <random>
#include <set>
#include <vector>

#include "sync/pair_set.h"

namespace streamhaz::testing {
namespace {

using analysis::Pair;
using analysis::PairSet;

std::vector<Pair> random_pairs(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> rank(0, 3);
  std::uniform_int_distribution<uint64_t> seq(0, 20);
  std::vector<Pair> out;
  for (size_t i = 0; i < n; ++i) out.emplace_back(rank(rng), seq(rng), seq(rng));
  return out;
}

}  // namespace

TEST_CASE("pair set: built from pairs in any order, with duplicates, it is the set of them") {
  const PairSet s{{1, 5, 9}, {0, 2, 3}, {1, 5, 9}, {0, 1, 7}};
  CHECK(s.size() == 3);
  CHECK(std::vector<Pair>(s.begin(), s.end()) == std::vector<Pair>{{0, 1, 7}, {0, 2, 3}, {1, 5, 9}});
  CHECK(s.contains({0, 2, 3}));
  CHECK_FALSE(s.contains({0, 3, 2}));
  CHECK(s.of_rank(0).size() == 2);
  CHECK(s.of_rank(1).size() == 1);
  CHECK(s.of_rank(2).empty());
  CHECK(PairSet{}.of_rank(0).empty());
}

TEST_CASE("pair set: union, difference, membership and a rank's slice agree with std::set") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const std::vector<Pair> a = random_pairs(rng, round % 40), b = random_pairs(rng, (round * 7) % 40);
    const std::set<Pair> sa(a.begin(), a.end()), sb(b.begin(), b.end());
    const PairSet pa(a), pb(b);
    CHECK(std::vector<Pair>(pa.begin(), pa.end()) == std::vector<Pair>(sa.begin(), sa.end()));

    std::vector<Pair> expected;
    std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(expected));
    const PairSet diff = pa.minus(pb);
    CHECK(std::vector<Pair>(diff.begin(), diff.end()) == expected);

    std::set<Pair> both = sa;
    both.insert(sb.begin(), sb.end());
    PairSet merged = pa;
    merged.merge(pb);
    CHECK(std::vector<Pair>(merged.begin(), merged.end()) == std::vector<Pair>(both.begin(), both.end()));

    for (const Pair& p : random_pairs(rng, 20)) CHECK(pa.contains(p) == (sa.count(p) == 1));
    for (int rank = 0; rank <= 4; ++rank) {
      std::vector<Pair> of_rank;
      for (const Pair& p : sa)
        if (std::get<0>(p) == rank) of_rank.push_back(p);
      const auto slice = pa.of_rank(rank);
      CHECK(std::vector<Pair>(slice.begin(), slice.end()) == of_rank);
    }
  }
}

}  // namespace streamhaz::testing
