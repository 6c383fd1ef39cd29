// Tier-1 footprints: the bytes an API operation reads and writes, from its arguments alone.
#pragma once

#include <cstdint>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

struct ByteRange {
  uint64_t lo = 0, hi = 0;
  trace::AccessMode mode = trace::AccessMode::Read;
  bool exact = true;
};

// Address arithmetic on trace values saturates at the top of the address space: a range
// running past 2^64 (only a corrupt or hostile trace holds one) is clipped there instead of
// wrapping into an empty or inverted range that would be skipped unchecked. The very last
// byte, 2^64 - 1, cannot be the inside of a half-open range and is left out.
inline uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
// The end of the `bytes` bytes at `ptr`.
inline uint64_t range_end(uint64_t ptr, uint64_t bytes) { return saturating_add(ptr, bytes); }

// Pitched copies with more rows than this are approximated by their bounding range.
inline constexpr uint64_t kMaxExactRows = 64;

// Appends `rows` rows of `width` bytes `pitch` apart starting at `base`.
void add_rows(std::vector<ByteRange>& out, uint64_t base, uint64_t width, uint64_t rows, uint64_t pitch,
              trace::AccessMode mode);

// The less precise of two tiers (static extents < annotations < sanitizer-exact < API
// arguments): a finding is as precise as its less precise operation.
trace::FootprintTier weaker_tier(trace::FootprintTier a, trace::FootprintTier b);

void memcpy_footprint(const trace::Memcpy& m, std::vector<ByteRange>& out);
void memset_footprint(const trace::Memset& m, std::vector<ByteRange>& out);
void nccl_ranges(const trace::Nccl& n, std::vector<ByteRange>& out);

}  // namespace streamhaz::analysis
