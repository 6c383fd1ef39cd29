// RankSeqs and RankSeqMap (analyzer/src/model/rank_seqs.h): one rank's part of a set or map keyed by
// (rank, seq), held to the set and map themselves on random keys of several ranks.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include "model/rank_seqs.h"

namespace streamhaz::testing {
namespace {

using analysis::RankSeqMap;
using analysis::RankSeqs;

TEST_CASE("rank seqs: a rank's part answers as the whole set and map do", "[rank_seqs]") {
  std::mt19937 rng(11);
  for (int round = 0; round < 20; ++round) {
    std::set<std::pair<int, uint64_t>> all;
    std::map<std::pair<int, uint64_t>, int> values;
    for (int i = 0; i < 200; ++i) {
      const std::pair<int, uint64_t> key{static_cast<int>(rng() % 5) - 1, rng() % 100};  // ranks -1 to 3
      all.insert(key);
      values[key] = static_cast<int>(rng() % 1000);
    }
    for (int rank = -2; rank <= 4; ++rank) {
      const RankSeqs seqs(all, rank);
      const RankSeqMap<int> map(values, rank);
      for (uint64_t seq = 0; seq <= 101; ++seq) {
        CAPTURE(rank, seq);
        CHECK(seqs.contains(seq) == (all.count({rank, seq}) > 0));
        const int* v = map.find(seq);
        REQUIRE((v != nullptr) == (values.count({rank, seq}) > 0));
        if (v) CHECK(*v == values.at({rank, seq}));
      }
    }
  }
  CHECK_FALSE(RankSeqs().contains(0));
  CHECK(RankSeqMap<int>().find(0) == nullptr);
}

}  // namespace
}  // namespace streamhaz::testing
