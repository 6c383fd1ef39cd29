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
  hot_.fill(HotRange{});
}

void AllocationIndex::remove(uint64_t base) {
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), std::make_pair(base, uint64_t{0}));
  if (it == ranges_.end() || it->first != base) return;
  ranges_.erase(it);
  refresh_bounds();
  hot_.fill(HotRange{});
}

void AllocationIndex::refresh_bounds() {
  lo_ = UINT64_MAX;
  hi_ = 0;
  for (const auto& [base, end] : ranges_) {
    lo_ = std::min(lo_, base);
    hi_ = std::max(hi_, end);
  }
}

bool AllocationIndex::find(uint64_t value, std::pair<uint64_t, uint64_t>& range) const {
  HotRange& hot = hot_[hot_slot(value)];
  if (hot.base <= value && value < hot.end) {
    range = {hot.base, hot.end};
    return true;
  }
  // The last range starting at or below `value`.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), value,
                             [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.first; });
  if (it == ranges_.begin() || value >= std::prev(it)->second) return false;
  range = *std::prev(it);
  hot = HotRange{range.first, range.second};
  return true;
}

bool AllocationIndex::contains(uint64_t value) const {
  if (value < lo_ || value >= hi_) return false;
  std::pair<uint64_t, uint64_t> range;
  return find(value, range);
}

size_t AllocationIndex::pointers_in(std::string_view arguments, uint64_t* candidates) const {
  if (ranges_.empty()) return 0;
  const size_t words = arguments.size() / 8;
  // First, without a branch per word: the words inside the bounding range of all allocations
  // (a foreach launch's metadata holds some 500 words, most of them counts and block tables).
  size_t n = 0;
  const uint64_t span = hi_ - lo_;
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, arguments.data() + 8 * i, 8);
    candidates[n] = word;
    n += word - lo_ < span;
  }
  // Then distinct candidates in address order. Most launches have a handful (an elementwise
  // kernel's operands): an insertion sort, whose few instructions a launch made after the
  // program's own work has evicted the tracer's code costs fewer cache misses than std::sort's.
  if (n <= kInsertionSortMax) {
    for (size_t i = 1; i < n; ++i) {
      const uint64_t v = candidates[i];
      size_t j = i;
      for (; j > 0 && candidates[j - 1] > v; --j) candidates[j] = candidates[j - 1];
      candidates[j] = v;
    }
  } else {
    std::sort(candidates, candidates + n);
  }
  // Each distinct one looked up where the last one's range does not hold it: pointers into one
  // caching-allocator segment sit together and cost one lookup.
  size_t kept = 0;
  uint64_t range_end = 0;  // of the last kept candidate's range: it holds the next ones below it
  for (size_t i = 0; i < n; ++i) {
    const uint64_t p = candidates[i];
    if (kept > 0 && candidates[kept - 1] == p) continue;
    if (p >= range_end) {
      std::pair<uint64_t, uint64_t> range;
      if (!find(p, range)) continue;
      range_end = range.second;
    }
    candidates[kept++] = p;
  }
  return kept;
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
