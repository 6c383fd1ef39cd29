// The live allocations the tracer has seen, answering one question fast: does this 64-bit value
// point into one of them? The pointer footprint tier asks it of every 8-byte-aligned word of a
// kernel's launch arguments, so the common case (an integer, a stride, a float pair) is turned
// away by one bounding-range compare before any search.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace streamhaz::tracer {

class AllocationIndex {
 public:
  void add(uint64_t base, uint64_t bytes);
  void remove(uint64_t base);
  bool contains(uint64_t value) const;
  // Appends each distinct 8-byte-aligned word of `arguments` that points into a live
  // allocation (pointers inside struct arguments included: they are aligned too), in address
  // order.
  void pointers_in(std::string_view arguments, std::vector<uint64_t>& out) const;
  // [lo, hi) cut to the live allocations it overlaps, appended to `out` in address order; a
  // range that overlaps none is appended whole (it may be memory the tracer does not see, such
  // as a module's globals).
  void cut(uint64_t lo, uint64_t hi, std::vector<std::pair<uint64_t, uint64_t>>& out) const;
  size_t size() const { return ranges_.size(); }

 private:
  void refresh_bounds();
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // [base, end), sorted by base
  uint64_t lo_ = UINT64_MAX, hi_ = 0;                  // bounding range of all of them
};

}  // namespace streamhaz::tracer
