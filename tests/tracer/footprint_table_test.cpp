// Decoding the exact tier's per-launch table (filled on the GPU by tracer/exact/footprint_patch.cu)
// into byte ranges.
#include <catch2/catch.hpp>

#include "streamhaz/tracer/footprint_table.h"

using namespace streamhaz::tracer::footprint;

namespace {
constexpr uint64_t kRegion = uint64_t{1} << kRegionShift;
constexpr uint64_t kGranule = uint64_t{1} << kGranuleShift;
Header empty_header() { return Header{0, 0, {0, 0}, {0, 0}}; }
}  // namespace

TEST_CASE("footprint table: granules become merged ranges, across regions, per direction") {
  const uint64_t r = 0x7f0000000000 >> kRegionShift;
  // Region r+1 listed first: decoding sorts. Reads: the last two granules of r and the first of
  // r+1 (one range across the boundary). Writes: granule 5 of r. Both: granule 10 of r+1.
  const Entry entries[] = {
      {r + 1, {0b1ull | (1ull << 10), 1ull << 10}},
      {r, {(1ull << 62) | (1ull << 63), 1ull << 5}},
  };
  const auto ranges = decode(empty_header(), entries, 2);
  const uint64_t base = r << kRegionShift;
  REQUIRE(ranges.size() == 3);
  CHECK(ranges[0] == TouchedRange{base + 5 * kGranule, base + 6 * kGranule, 2, true});
  CHECK(ranges[1] == TouchedRange{base + 62 * kGranule, base + kRegion + kGranule, 1, true});
  CHECK(ranges[2] == TouchedRange{base + kRegion + 10 * kGranule, base + kRegion + 11 * kGranule, 3, true});
}

TEST_CASE("footprint table: an overflowed launch adds its coarse hulls, marked inexact") {
  Header h = empty_header();
  h.overflow = 1;
  h.hull_lo_inverted[1] = ~uint64_t{0x1000};
  h.hull_hi[1] = 0x9000;  // writes only; the read hull is empty (all zero)
  const auto ranges = decode(h, nullptr, 0);
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0] == TouchedRange{0x1000, 0x9000, 2, false});
}

TEST_CASE("footprint table: the device layout is what the decoder assumes") {
  STATIC_REQUIRE(sizeof(Header) <= Layout::buckets);
  STATIC_REQUIRE(sizeof(Bucket) == 16);
  STATIC_REQUIRE(sizeof(Entry) == 24);
  STATIC_REQUIRE(Layout::bytes < (uint64_t{1} << 20));
}
