#include "sync/pair_set.h"

#include <algorithm>
#include <iterator>

namespace streamhaz::analysis {

PairSet::PairSet(std::vector<Pair> pairs) : pairs_(std::move(pairs)) {
  if (!std::is_sorted(pairs_.begin(), pairs_.end())) std::sort(pairs_.begin(), pairs_.end());
  pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
}

bool PairSet::contains(const Pair& p) const { return std::binary_search(pairs_.begin(), pairs_.end(), p); }

std::span<const Pair> PairSet::of_rank(int rank) const {
  const auto first = std::lower_bound(pairs_.begin(), pairs_.end(), Pair{rank, 0, 0});
  const auto last = std::lower_bound(first, pairs_.end(), Pair{rank + 1, 0, 0});
  return {first, last};
}

void PairSet::merge(const PairSet& other) {
  if (other.empty()) return;
  if (empty()) {
    pairs_ = other.pairs_;
    return;
  }
  std::vector<Pair> both;
  both.reserve(pairs_.size() + other.pairs_.size());
  std::set_union(pairs_.begin(), pairs_.end(), other.pairs_.begin(), other.pairs_.end(), std::back_inserter(both));
  pairs_ = std::move(both);
}

PairSet PairSet::minus(const PairSet& base) const {
  PairSet out;
  std::set_difference(pairs_.begin(), pairs_.end(), base.pairs_.begin(), base.pairs_.end(),
                      std::back_inserter(out.pairs_));
  return out;
}

}  // namespace streamhaz::analysis
