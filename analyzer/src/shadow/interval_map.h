// A map from disjoint half-open byte ranges [start, end) to values, kept as few ranges as
// possible: an update splits the ranges it partly covers, and afterwards neighbours that
// ended up with equal values merge again. Values with empty() true are not stored (gaps).
// O(log n + k) per update, k the ranges touched.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>

#include "shadow/node_pool.h"

namespace streamhaz::analysis {

template <class V>
class IntervalMap {
 public:
  struct Cell {
    uint64_t end;
    V value;
  };
  // Nodes from this map's own pool (node_pool.h): a copy or move fills a fresh one.
  using Map = std::map<uint64_t, Cell, std::less<uint64_t>, PoolAllocator<std::pair<const uint64_t, Cell>>>;

  IntervalMap() : cells_(typename Map::allocator_type(&pool_)) {}
  IntervalMap(const IntervalMap& o) : IntervalMap() { cells_.insert(o.cells_.begin(), o.cells_.end()); }
  IntervalMap& operator=(const IntervalMap& o) {
    if (this != &o) {
      cells_.clear();
      cells_.insert(o.cells_.begin(), o.cells_.end());
    }
    return *this;
  }

  // Calls fn(start, end, V&) for every piece of [lo, hi), gaps included (as V{}), in address
  // order; each piece lies in one former range. Then drops empty values and merges equals.
  // One tree search: the ranges after the first are reached by walking, split at hi on the way.
  template <class Fn>
  void update(uint64_t lo, uint64_t hi, Fn&& fn) {
    if (lo >= hi) return;
    auto it = cells_.lower_bound(lo);
    // Fast path: the range is exactly one stored range (a buffer used whole, again).
    if (it != cells_.end() && it->first == lo && it->second.end == hi) {
      fn(lo, hi, it->second.value);
      settle(it);
      return;
    }
    if (it != cells_.begin()) {  // a range starting before lo and reaching into it is split at lo
      if (auto before = std::prev(it); before->second.end > lo) it = split(before, lo);
    }
    const auto first = piece_at(it, lo, hi);  // the piece starting at lo
    it = first;
    for (;;) {
      fn(it->first, it->second.end, it->second.value);
      const uint64_t pos = it->second.end;
      if (pos >= hi) break;
      it = piece_at(std::next(it), pos, hi);
    }
    tidy(first, hi);
  }

  // Calls fn(start, end, const V&) for the stored pieces overlapping [lo, hi), clipped.
  template <class Fn>
  void visit(uint64_t lo, uint64_t hi, Fn&& fn) const {
    auto it = cells_.upper_bound(lo);
    if (it != cells_.begin()) --it;
    for (; it != cells_.end() && it->first < hi; ++it) {
      if (it->second.end <= lo) continue;
      fn(it->first < lo ? lo : it->first, it->second.end > hi ? hi : it->second.end, it->second.value);
    }
  }

  void erase(uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    split_at(lo);
    split_at(hi);
    cells_.erase(cells_.lower_bound(lo), cells_.lower_bound(hi));
  }

  size_t size() const { return cells_.size(); }
  void prefetch() const { pool_.prefetch(); }  // the nodes toward the caches (node_pool.h)
  const Map& cells() const { return cells_; }

 private:
  // Makes `x` a range boundary if it falls strictly inside a stored range.
  void split_at(uint64_t x) {
    auto it = cells_.upper_bound(x);
    if (it == cells_.begin()) return;
    --it;
    if (it->first < x && x < it->second.end) split(it, x);
  }

  // Splits the range at `it` at `x`, strictly inside it; returns the right part.
  typename Map::iterator split(typename Map::iterator it, uint64_t x) {
    Cell right{it->second.end, it->second.value};
    it->second.end = x;
    return cells_.emplace_hint(std::next(it), x, std::move(right));
  }

  // The piece of [pos, hi) that starts at pos, `it` being the first range starting at or after
  // pos: that range cut at hi, or the gap before it (inserted, empty).
  typename Map::iterator piece_at(typename Map::iterator it, uint64_t pos, uint64_t hi) {
    if (it == cells_.end() || it->first > pos) {
      const uint64_t gap_end = (it == cells_.end() || it->first > hi) ? hi : it->first;
      return cells_.emplace_hint(it, pos, Cell{gap_end, V{}});
    }
    if (it->second.end > hi) split(it, hi);
    return it;
  }

  // After one range changed: drop it if empty, else merge it with equal neighbours.
  void settle(typename Map::iterator it) {
    if (it->second.value.empty()) {
      cells_.erase(it);
      return;
    }
    if (auto next = std::next(it); next != cells_.end() && next->first == it->second.end &&
                                   next->second.value == it->second.value) {
      it->second.end = next->second.end;
      cells_.erase(next);
    }
    if (it != cells_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end == it->first && prev->second.value == it->second.value) {
        prev->second.end = it->second.end;
        cells_.erase(it);
      }
    }
  }

  // Drops empty ranges from `first` to the range starting at hi and merges equal neighbours,
  // from the range before `first` on.
  void tidy(typename Map::iterator first, uint64_t hi) {
    auto it = first;
    if (it != cells_.begin()) --it;
    while (it != cells_.end() && it->first <= hi) {
      if (it->second.value.empty()) {
        it = cells_.erase(it);
        continue;
      }
      auto next = std::next(it);
      if (next != cells_.end() && next->first == it->second.end && next->first <= hi &&
          !next->second.value.empty() && next->second.value == it->second.value) {
        it->second.end = next->second.end;
        cells_.erase(next);
        continue;
      }
      it = next;
    }
  }

  NodePool pool_;  // before cells_: outlives it
  Map cells_;
};

}  // namespace streamhaz::analysis
