// One rank's part of a set (or map) keyed by (rank, seq): the over-synchronisation pass hands its
// checks the synchronisations left out, the phantoms and the sites of every rank in one tree, and
// a rank asks it about each of its operations. A sorted array of its own seqs answers with a few
// cache lines where the tree over every rank's entries missed the cache at each level.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace streamhaz::analysis {

class RankSeqs {
 public:
  RankSeqs() = default;
  RankSeqs(const std::set<std::pair<int, uint64_t>>& all, int rank) {
    for (auto it = all.lower_bound({rank, 0}); it != all.end() && it->first == rank; ++it) seqs_.push_back(it->second);
  }
  bool contains(uint64_t seq) const { return std::binary_search(seqs_.begin(), seqs_.end(), seq); }

 private:
  std::vector<uint64_t> seqs_;  // sorted: the tree's order
};

template <class V>
class RankSeqMap {
 public:
  RankSeqMap() = default;
  RankSeqMap(const std::map<std::pair<int, uint64_t>, V>& all, int rank) {
    for (auto it = all.lower_bound({rank, 0}); it != all.end() && it->first.first == rank; ++it)
      entries_.push_back({it->first.second, it->second});
  }
  const V* find(uint64_t seq) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), seq,
                               [](const std::pair<uint64_t, V>& e, uint64_t s) { return e.first < s; });
    return it != entries_.end() && it->first == seq ? &it->second : nullptr;
  }

 private:
  std::vector<std::pair<uint64_t, V>> entries_;  // sorted by seq: the map's order
};

}  // namespace streamhaz::analysis
