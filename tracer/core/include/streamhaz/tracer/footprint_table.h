// The exact footprint tier's per-launch table, shared by the device patch that fills it
// (tracer/exact/footprint_patch.cu) and the host code that reads it back and turns it into byte
// ranges. Plain fixed-size integers only: this header is compiled by nvcc and by the host
// compiler, and the decoding half is unit-tested without CUDA.
//
// Two levels, so that a launch's footprint claims only memory it touched:
//   - fine: global memory cut into 8 KiB regions of 64 granules of 128 bytes (one L2 line). For
//     every region a launch touches, one entry with a bit per granule read and per granule
//     written. Holds 1 GiB of touched memory per launch: every launch of a real training step
//     measured so far (a foreach optimizer launch over 36 tensors touches about 340 MB).
//   - coarse: when the fine table is full, 2 MiB regions of 64 granules of 32 KiB take the rest
//     (32 GiB more). Such a launch's ranges are the coarse tier (trace::FootprintTier::Coarse):
//     still only granules it touched, each at most 32 KiB - 1 byte wider at either end, and the
//     tracer cuts them at the allocations it knows (footprint_clip.h).
// Past both (more than 33 GiB touched by one launch) the remaining accesses widen one hull per
// direction: sound, and reported as coarse.
// A device-side hash (bucket -> entry index) finds an entry; entries are appended in one dense
// array per level so that reading a launch back copies only what it touched.
#pragma once

#include <cstdint>
#include <vector>

namespace streamhaz::tracer::footprint {

inline constexpr unsigned kGranuleShift = 7;  // 128-byte granules
inline constexpr unsigned kRegionShift = 13;  // 8 KiB regions: 64 granules, one bit each
inline constexpr unsigned kBuckets = 1u << 18;
inline constexpr unsigned kEntries = 1u << 17;  // 1 GiB of touched memory per launch

inline constexpr unsigned kCoarseGranuleShift = 15;  // 32 KiB granules
inline constexpr unsigned kCoarseRegionShift = 21;   // 2 MiB regions
inline constexpr unsigned kCoarseBuckets = 1u << 15;
inline constexpr unsigned kCoarseEntries = 1u << 14;  // 32 GiB more

inline constexpr unsigned kMaxProbes = 64;
inline constexpr uint32_t kIndexOverflow = 0xffffffffu;

struct Header {
  uint32_t used;              // fine entries appended (may exceed kEntries: the excess went coarse)
  uint32_t coarse_used;       // coarse entries appended (may exceed kCoarseEntries: the excess widened the hulls)
  uint32_t overflow;          // non-zero: some accesses are only in the hulls below
  uint32_t pad;
  // [read, write] hull of the accesses neither level had room for. The low end is kept inverted
  // (~lo, grown with atomicMax) so that an all-zero header, as the host clears it, is an empty hull.
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

// The device memory of one launch slot, in this order: what a launch must clear before it runs
// (header and both bucket arrays) first, then the entries, cleared as far as the last launch used them.
// `fine_limit` (a uint32 after the header, written once per slot, not cleared) caps the fine level
// below kEntries when non-zero: a diagnostic (STREAMHAZ_EXACT_FINE_REGIONS) that sends more
// launches to the coarse level, to measure what it costs in precision.
struct Layout {
  static constexpr uint64_t header = 0;
  static constexpr uint64_t fine_limit = 56;
  static constexpr uint64_t buckets = 64;
  static constexpr uint64_t coarse_buckets = buckets + uint64_t{kBuckets} * sizeof(Bucket);
  static constexpr uint64_t entries = coarse_buckets + uint64_t{kCoarseBuckets} * sizeof(Bucket);
  static constexpr uint64_t coarse_entries = entries + uint64_t{kEntries} * sizeof(Entry);
  static constexpr uint64_t bytes = coarse_entries + uint64_t{kCoarseEntries} * sizeof(Entry);
};

// A byte range a launch read (mode 1), wrote (2) or both (3), at the resolution it was recorded.
struct TouchedRange {
  uint64_t lo, hi;
  uint8_t mode;
  uint32_t granule;  // bytes: 128 (fine), 32768 (coarse), 0 (the overflow hull)
  bool operator==(const TouchedRange&) const = default;
  bool fine() const { return granule == (1u << kGranuleShift); }
};

// The ranges a read-back table describes: adjacent granules of one level merged into one range
// per direction, a range read and written split into read-write pieces where both bits are set.
// Sorted by lo.
std::vector<TouchedRange> decode(const Header& header, const Entry* entries, uint32_t count,
                                 const Entry* coarse = nullptr, uint32_t coarse_count = 0);

}  // namespace streamhaz::tracer::footprint
