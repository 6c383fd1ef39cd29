// A set of conflicting pairs, as the over-synchronisation pass keeps them: one sorted vector,
// built in bulk and then only read. The pass's checks hand over up to hundreds of thousands of
// pairs each; a tree node per pair cost more (allocation, page faults, pointer chasing) than the
// checks that found them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <tuple>
#include <vector>

namespace streamhaz::analysis {

using Pair = std::tuple<int, uint64_t, uint64_t>;  // rank, earlier seq, later seq

class PairSet {
 public:
  PairSet() = default;
  // Pairs in any order, duplicates allowed: sorted and made unique once.
  explicit PairSet(std::vector<Pair> pairs);
  PairSet(std::initializer_list<Pair> pairs) : PairSet(std::vector<Pair>(pairs)) {}

  bool contains(const Pair& p) const;
  bool empty() const { return pairs_.empty(); }
  size_t size() const { return pairs_.size(); }
  auto begin() const { return pairs_.begin(); }
  auto end() const { return pairs_.end(); }
  // Ordered by rank first: one rank's pairs are a slice.
  std::span<const Pair> of_rank(int rank) const;
  const std::vector<Pair>& sorted() const { return pairs_; }

  void merge(const PairSet& other);        // this ∪ other
  PairSet minus(const PairSet& base) const;  // pairs not in `base`

  bool operator==(const PairSet&) const = default;

 private:
  std::vector<Pair> pairs_;  // sorted, unique
};

}  // namespace streamhaz::analysis
