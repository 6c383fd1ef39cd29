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
  const size_t first = out.size();
  // Neighbouring pointers of a launch mostly fall in one caching-allocator segment: the range
  // that took the last one is asked first, before any search.
  uint64_t hit_lo = 0, hit_hi = 0;  // empty
  for (size_t off = 0; off + 8 <= arguments.size(); off += 8) {
    uint64_t word;
    std::memcpy(&word, arguments.data() + off, 8);
    if (word - hit_lo < hit_hi - hit_lo) {
      out.push_back(word);
      continue;
    }
    if (word < lo_ || word >= hi_) continue;
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), word,
                               [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.first; });
    if (it == ranges_.begin() || word >= std::prev(it)->second) continue;
    hit_lo = std::prev(it)->first;
    hit_hi = std::prev(it)->second;
    out.push_back(word);
  }
  // Distinct, in address order. A foreach launch holds hundreds of pointers: looking for each
  // among those found before cost tens of microseconds per launch.
  std::sort(out.begin() + first, out.end());
  out.erase(std::unique(out.begin() + first, out.end()), out.end());
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
