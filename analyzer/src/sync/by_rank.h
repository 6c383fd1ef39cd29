// What a check's callbacks collect, kept by rank: the pass's checks run ranks on several threads
// (AnalysisOptions::callbacks_by_rank), each rank on one thread at a time, so that a rank's part
// needs no lock; the parts are then read in the run's rank order, which makes the result the
// one-thread check's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "streamhaz/analysis/analyze.h"

namespace streamhaz::analysis {

template <class T>
class ByRank {
 public:
  explicit ByRank(const std::vector<RankRecords>& run) : parts_(run.size()) {
    int top = -1;
    for (const RankRecords& r : run) top = std::max(top, r.rank);
    // Ranks are numbered 0 to N-1 in practice: an array; any numbering still works, by a map.
    const bool dense = top < 4 * static_cast<int>(run.size()) + 64;
    for (size_t i = 0; i < run.size(); ++i) {
      if (dense && run[i].rank >= 0) {
        if (slot_.size() <= static_cast<size_t>(run[i].rank)) slot_.resize(run[i].rank + 1, kNone);
        slot_[run[i].rank] = i;
      } else {
        sparse_[run[i].rank] = i;
      }
    }
  }

  // The part of `rank`, a rank of the run.
  std::vector<T>& of(int rank) {
    if (rank >= 0 && static_cast<size_t>(rank) < slot_.size() && slot_[rank] != kNone) return parts_[slot_[rank]];
    return parts_[sparse_.at(rank)];
  }
  // Every part, in the run's rank order.
  std::vector<std::vector<T>>& parts() { return parts_; }
  // The parts one after another, in the run's rank order.
  std::vector<T> joined() {
    size_t n = 0;
    for (const auto& p : parts_) n += p.size();
    std::vector<T> all;
    all.reserve(n);
    for (auto& p : parts_) all.insert(all.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
    return all;
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<std::vector<T>> parts_;
  std::vector<size_t> slot_;
  std::unordered_map<int, size_t> sparse_;
};

}  // namespace streamhaz::analysis
