#include "streamhaz/tracer/allocation_index.h"

#include <algorithm>
#include <cstring>

namespace streamhaz::tracer {

void AllocationIndex::add(uint64_t base, uint64_t bytes) {
  if (bytes == 0) return;
  const uint64_t end = base + bytes < base ? UINT64_MAX : base + bytes;
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), std::make_pair(base, uint64_t{0}));
  if (it != ranges_.end() && it->first == base) it->second = end;  // a reused base: the new size
  else ranges_.insert(it, {base, end});
  lo_ = std::min(lo_, base);
  hi_ = std::max(hi_, end);
}

void AllocationIndex::remove(uint64_t base) {
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), std::make_pair(base, uint64_t{0}));
  if (it == ranges_.end() || it->first != base) return;
  ranges_.erase(it);
  refresh_bounds();
}

void AllocationIndex::refresh_bounds() {
  lo_ = UINT64_MAX;
  hi_ = 0;
  for (const auto& [base, end] : ranges_) {
    lo_ = std::min(lo_, base);
    hi_ = std::max(hi_, end);
  }
}

bool AllocationIndex::contains(uint64_t value) const {
  if (value < lo_ || value >= hi_) return false;
  // The last range starting at or below `value`.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), value,
                             [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.first; });
  return it != ranges_.begin() && value < std::prev(it)->second;
}

void AllocationIndex::pointers_in(std::string_view arguments, std::vector<uint64_t>& out) const {
  if (ranges_.empty()) return;
  const size_t first = out.size(), words = arguments.size() / 8;
  // First, without a branch per word: the words inside the bounding range of all allocations
  // (a foreach launch's metadata holds some 500 words, most of them counts and block tables).
  out.resize(first + words);
  uint64_t* candidates = out.data() + first;
  size_t n = 0;
  const uint64_t span = hi_ - lo_;
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, arguments.data() + 8 * i, 8);
    candidates[n] = word;
    n += word - lo_ < span;
  }
  // Then distinct candidates in address order, walked against the ranges (sorted, disjoint, so
  // their ends are sorted too): pointers into one caching-allocator segment sit together and
  // cost one search for all of them, where a search each cost microseconds per foreach launch.
  std::sort(candidates, candidates + n);
  n = static_cast<size_t>(std::unique(candidates, candidates + n) - candidates);
  auto range = ranges_.begin();
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t p = candidates[i];
    if (range->second <= p) {  // the first range ending after p
      range = std::upper_bound(range, ranges_.end(), p,
                               [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.second; });
      if (range == ranges_.end()) break;
    }
    if (range->first <= p) candidates[kept++] = p;
  }
  out.resize(first + kept);
}

void AllocationIndex::cut(uint64_t lo, uint64_t hi, std::vector<std::pair<uint64_t, uint64_t>>& out) const {
  const size_t first = out.size();
  // The first allocation that ends after lo: the one before it (by base) may still reach lo.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), lo,
                             [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.first; });
  if (it != ranges_.begin() && std::prev(it)->second > lo) --it;
  for (; it != ranges_.end() && it->first < hi; ++it)
    if (it->second > lo) out.emplace_back(std::max(lo, it->first), std::min(hi, it->second));
  if (out.size() == first) out.emplace_back(lo, hi);
}

}  // namespace streamhaz::tracer
