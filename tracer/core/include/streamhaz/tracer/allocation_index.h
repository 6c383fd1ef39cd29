// The live allocations the tracer has seen, answering one question fast: does this 64-bit value
// point into one of them? The pointer footprint tier asks it of every 8-byte-aligned word of a
// kernel's launch arguments, so the common case (an integer, a stride, a float pair) is turned
// away by one bounding-range compare before any search.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "streamhaz/tracer/hot_path.h"

namespace streamhaz::tracer {

class AllocationIndex {
 public:
  void add(uint64_t base, uint64_t bytes);
  void remove(uint64_t base);
  bool contains(uint64_t value) const;
  // Each distinct 8-byte-aligned word of `arguments` that points into a live allocation
  // (pointers inside struct arguments included: they are aligned too), in address order, written
  // to `room` (which holds arguments.size() / 8 words); returns how many.
  STREAMHAZ_HOT size_t pointers_in(std::string_view arguments, uint64_t* room) const;
  // [lo, hi) cut to the live allocations it overlaps, appended to `out` in address order; a
  // range that overlaps none is appended whole (it may be memory the tracer does not see, such
  // as a module's globals).
  void cut(uint64_t lo, uint64_t hi, std::vector<std::pair<uint64_t, uint64_t>>& out) const;
  size_t size() const { return ranges_.size(); }

 private:
  static constexpr size_t kInsertionSortMax = 16;  // candidates sorted by insertion, more by std::sort
  void refresh_bounds();
  // The range holding `value` (from the hot table, else by a search that fills it), or none.
  STREAMHAZ_HOT bool find(uint64_t value, std::pair<uint64_t, uint64_t>& range) const;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // [base, end), sorted by base
  uint64_t lo_ = UINT64_MAX, hi_ = 0;                  // bounding range of all of them

  // Ranges that held recent values, by the 2 MiB page of the value: a training step's launches
  // point into the caching allocator's segments, the same ones launch after launch. Between two
  // launches the program's own work evicts the tracer's data, and a binary search then costs a
  // cache miss per level (8 among 256 ranges); one slot of this table costs one. Ranges are
  // disjoint, so a slot whose range holds the value is the answer; every add or remove empties it.
  struct HotRange {
    uint64_t base = UINT64_MAX, end = 0;  // holds nothing
  };
  static constexpr int kHotPageBits = 21;
  static constexpr size_t kHotSlots = 256;
  static size_t hot_slot(uint64_t value) { return (value >> kHotPageBits) % kHotSlots; }
  mutable std::array<HotRange, kHotSlots> hot_{};
};

}  // namespace streamhaz::tracer
