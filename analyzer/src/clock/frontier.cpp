#include "clock/frontier.h"

#include <algorithm>

namespace streamhaz::analysis {

std::pair<const ClockValue*, size_t> Frontier::of(uint32_t rank) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), rank,
                             [](const Entry& e, uint32_t r) { return e.rank < r; });
  if (it == entries_.end() || it->rank != rank) return {nullptr, 0};
  return {values_.data() + it->offset, it->size};
}

bool Frontier::covers(uint64_t id) const {
  return id == id_ || std::binary_search(inputs_.begin(), inputs_.end(), id);
}

void drop_covered(std::vector<FrontierRef>& set) {
  std::vector<FrontierRef> kept;
  for (size_t i = 0; i < set.size(); ++i) {
    bool covered = false;
    for (size_t j = 0; j < set.size() && !covered; ++j) {
      if (i == j) continue;
      // Equal ids: keep the first. Otherwise drop what a direct merge already contains.
      if (set[j]->id() == set[i]->id()) covered = j < i;
      else covered = set[j]->covers(set[i]->id());
    }
    if (!covered) kept.push_back(set[i]);
  }
  set = std::move(kept);
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

void FrontierBuilder::add(uint32_t rank, const VectorClock& clock) { add(rank, clock.data(), clock.size()); }

void FrontierBuilder::add(const FrontierRef& f) {
  if (!f) return;
  inputs_.push_back(f->id_);
  for (const Frontier::Entry& e : f->entries_) add(e.rank, f->values_.data() + e.offset, e.size);
}

FrontierRef FrontierBuilder::build() {
  auto f = std::make_shared<Frontier>();
  f->id_ = next_id_++;
  std::sort(touched_.begin(), touched_.end());
  f->entries_.reserve(touched_.size());
  for (uint32_t r : touched_) {
    const std::vector<ClockValue>& a = acc_[r];
    f->entries_.push_back({r, static_cast<uint32_t>(f->values_.size()), static_cast<uint32_t>(a.size())});
    f->values_.insert(f->values_.end(), a.begin(), a.end());
  }
  std::sort(inputs_.begin(), inputs_.end());
  inputs_.erase(std::unique(inputs_.begin(), inputs_.end()), inputs_.end());
  f->inputs_ = inputs_;
  return f;
}

}  // namespace streamhaz::analysis
