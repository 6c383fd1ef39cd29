// The exact footprint tier's per-launch table, shared by the device patch that fills it
// (tracer/exact/footprint_patch.cu) and the host code that reads it back and turns it into byte
// ranges. Plain fixed-size integers only: this header is compiled by nvcc and by the host
// compiler, and the decoding half is unit-tested without CUDA.
//
// Global memory is cut into 8 KiB regions of 64 granules of 128 bytes. For every region a launch
// touches, the table holds one entry with a bit per granule read and a bit per granule written.
// A device-side hash (bucket -> entry index) finds the entry; entries are appended in one dense
// array so that reading a launch back copies only what it touched. A launch that touches more
// regions than the table holds sets `overflow` and widens a coarse hull per direction instead:
// still sound, no longer exact.
#pragma once

#include <cstdint>
#include <vector>

namespace streamhaz::tracer::footprint {

inline constexpr unsigned kGranuleShift = 7;  // 128-byte granules (one L2 cache line)
inline constexpr unsigned kRegionShift = 13;  // 8 KiB regions: 64 granules, one bit each
inline constexpr unsigned kBuckets = 1u << 15;
inline constexpr unsigned kEntries = 1u << 14;  // 128 MiB of touched memory per launch
inline constexpr unsigned kMaxProbes = 64;
inline constexpr uint32_t kIndexOverflow = 0xffffffffu;

struct Header {
  uint32_t used;      // entries appended (may exceed kEntries: the excess overflowed)
  uint32_t overflow;  // non-zero: some accesses are only in the hulls below
  // [read, write] coarse hull of overflowed accesses. The low end is kept inverted (~lo, grown
  // with atomicMax) so that an all-zero header, as the host clears it, is an empty hull.
  uint64_t hull_lo_inverted[2];
  uint64_t hull_hi[2];
};

struct Bucket {
  uint64_t key;    // region + 1; 0: empty
  uint32_t index;  // entry + 1 once published; 0: being inserted; kIndexOverflow: table full
  uint32_t pad;
};

struct Entry {
  uint64_t region;
  uint64_t bits[2];  // [read, write]: granule g of the region was touched
};

// The device memory of one launch slot, in this order.
struct Layout {
  static constexpr uint64_t header = 0;
  static constexpr uint64_t buckets = 64;
  static constexpr uint64_t entries = buckets + uint64_t{kBuckets} * sizeof(Bucket);
  static constexpr uint64_t bytes = entries + uint64_t{kEntries} * sizeof(Entry);
};

// A byte range a launch read (mode 1), wrote (2) or both (3).
struct TouchedRange {
  uint64_t lo, hi;
  uint8_t mode;
  bool exact;  // false: from the overflow hull
  bool operator==(const TouchedRange&) const = default;
};

// The ranges a read-back table describes: adjacent granules merged into one range per direction,
// a range read and written split into read-write pieces where both bits are set. Sorted by lo.
std::vector<TouchedRange> decode(const Header& header, const Entry* entries, uint32_t count);

}  // namespace streamhaz::tracer::footprint
