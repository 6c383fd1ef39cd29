#include "clock/frontier.h"

#include <algorithm>

namespace streamhaz::analysis {

std::pair<const ClockValue*, size_t> Frontier::of(uint32_t rank) const {
  size_t i = rank;
  if (!dense_ranks_) {
    const uint32_t* it = std::lower_bound(rank_of(), rank_of() + ranks_, rank);
    i = static_cast<size_t>(it - rank_of());
    if (i == ranks_ || *it != rank) return {nullptr, 0};
  } else if (i >= ranks_) {
    return {nullptr, 0};
  }
  return {values() + offsets()[i], offsets()[i + 1] - offsets()[i]};
}

bool Frontier::covers(uint64_t id) const {
  if (id == id_) return true;
  size_t lo = 0, hi = inputs_;  // binary search over the sorted inputs
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const uint64_t v = input(mid);
    if (v == id) return true;
    if (v < id) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

void drop_covered(std::vector<FrontierRef>& set) {
  // Decided against the whole original set, then compacted in place (no allocation for the
  // handful of frontiers a set holds; a byte per element beyond 64).
  const size_t n = set.size();
  uint64_t small = 0;
  std::vector<char> large(n > 64 ? n : 0, 0);
  auto mark = [&](size_t i) { n > 64 ? void(large[i] = 1) : void(small |= uint64_t(1) << i); };
  auto marked = [&](size_t i) { return n > 64 ? large[i] != 0 : ((small >> i) & 1) != 0; };
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      // Equal ids: keep the first. Otherwise drop what a direct merge already contains.
      const bool covered = set[j]->id() == set[i]->id() ? j < i : set[j]->covers(set[i]->id());
      if (covered) {
        mark(i);
        break;
      }
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i)
    if (!marked(i)) set[kept++] = std::move(set[i]);
  set.resize(kept);
}

void FrontierBuilder::start(size_t ranks) {
  if (acc_.size() < ranks) acc_.resize(ranks);
  for (uint32_t r : touched_) acc_[r].clear();
  touched_.clear();
  inputs_.clear();
}

void FrontierBuilder::add(uint32_t rank, const ClockValue* v, size_t n) {
  if (rank >= acc_.size()) acc_.resize(rank + 1);
  std::vector<ClockValue>& a = acc_[rank];
  if (a.empty()) touched_.push_back(rank);
  if (a.size() < n) a.resize(n, 0);
  for (size_t i = 0; i < n; ++i) a[i] = std::max(a[i], v[i]);
  if (a.empty()) a.push_back(0);  // an entry that knows nothing yet still marks the rank touched
}

void FrontierBuilder::add(const FrontierRef& f) {
  if (!f) return;
  inputs_.push_back(f->id_);
  const uint32_t* offsets = f->offsets();
  for (uint32_t i = 0; i < f->ranks_; ++i)
    add(f->rank_of()[i], f->values() + offsets[i], offsets[i + 1] - offsets[i]);
}

FrontierRef FrontierBuilder::build() {
  auto f = std::make_shared<Frontier>();
  f->id_ = next_id_++;
  std::sort(touched_.begin(), touched_.end());
  std::sort(inputs_.begin(), inputs_.end());
  inputs_.erase(std::unique(inputs_.begin(), inputs_.end()), inputs_.end());
  size_t values = 0;
  for (uint32_t r : touched_) values += acc_[r].size();
  const size_t ranks = touched_.size();
  f->ranks_ = static_cast<uint32_t>(ranks);
  f->inputs_ = static_cast<uint32_t>(inputs_.size());
  f->words_ = std::make_unique_for_overwrite<uint32_t[]>(2 * ranks + 1 + values + 2 * inputs_.size());
  uint32_t* rank_of = f->words_.get();
  uint32_t* offsets = rank_of + ranks;
  uint32_t* out = offsets + ranks + 1;
  uint32_t at = 0;
  bool dense = true;
  for (size_t i = 0; i < ranks; ++i) {
    const uint32_t r = touched_[i];
    const std::vector<ClockValue>& a = acc_[r];
    rank_of[i] = r;
    dense = dense && r == i;
    offsets[i] = at;
    std::copy(a.begin(), a.end(), out + at);
    at += static_cast<uint32_t>(a.size());
  }
  offsets[ranks] = at;
  f->dense_ranks_ = dense;
  uint32_t* in = out + at;
  for (uint64_t id : inputs_) {
    *in++ = static_cast<uint32_t>(id >> 32);
    *in++ = static_cast<uint32_t>(id);
  }
  return f;
}

}  // namespace streamhaz::analysis
