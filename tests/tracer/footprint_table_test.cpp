// Decoding the exact tier's per-launch table (filled on the GPU by tracer/exact/footprint_patch.cu)
// into byte ranges.
#include <catch2/catch.hpp>

#include "streamhaz/tracer/footprint_table.h"

using namespace streamhaz::tracer::footprint;

namespace {
constexpr uint64_t kRegion = uint64_t{1} << kRegionShift;
constexpr uint64_t kGranule = uint64_t{1} << kGranuleShift;
constexpr uint64_t kCoarseRegion = uint64_t{1} << kCoarseRegionShift;
constexpr uint64_t kCoarseGranule = uint64_t{1} << kCoarseGranuleShift;
constexpr uint32_t kFine = uint32_t{1} << kGranuleShift;
Header empty_header() { return Header{}; }
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
  CHECK(ranges[0] == TouchedRange{base + 5 * kGranule, base + 6 * kGranule, 2, kFine});
  CHECK(ranges[1] == TouchedRange{base + 62 * kGranule, base + kRegion + kGranule, 1, kFine});
  CHECK(ranges[2] == TouchedRange{base + kRegion + 10 * kGranule, base + kRegion + 11 * kGranule, 3, kFine});
}

TEST_CASE("footprint table: untouched granules between two tensors are never claimed") {
  // Two tensors 1 GiB apart, each touched in its first granule: two ranges, nothing between.
  const uint64_t r1 = 0x7f0000000000 >> kRegionShift, r2 = r1 + ((uint64_t{1} << 30) >> kRegionShift);
  const Entry entries[] = {{r2, {1, 0}}, {r1, {1, 0}}};
  const auto ranges = decode(empty_header(), entries, 2);
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].hi - ranges[0].lo == kGranule);
  CHECK(ranges[1].lo == r2 << kRegionShift);
}

TEST_CASE("footprint table: a full fine level continues at 32 KiB granules, never one span") {
  const uint64_t fine_region = 0x7f0000000000 >> kRegionShift;
  const Entry fine[] = {{fine_region, {1, 0}}};
  // Coarse granules 0 and 63 of one 2 MiB region: two ranges, the 1.9 MiB between them unclaimed.
  const uint64_t c = 0x7f1000000000 >> kCoarseRegionShift;
  const Entry coarse[] = {{c, {0, 1ull | (1ull << 63)}}};
  const auto ranges = decode(empty_header(), fine, 1, coarse, 1);
  REQUIRE(ranges.size() == 3);
  CHECK(ranges[0].fine());
  const uint64_t base = c << kCoarseRegionShift;
  CHECK(ranges[1] == TouchedRange{base, base + kCoarseGranule, 2, uint32_t(kCoarseGranule)});
  CHECK(ranges[2] == TouchedRange{base + kCoarseRegion - kCoarseGranule, base + kCoarseRegion, 2, uint32_t(kCoarseGranule)});
  CHECK_FALSE(ranges[1].fine());
}

TEST_CASE("footprint table: past both levels the hull is the last resort, not exact") {
  Header h = empty_header();
  h.overflow = 1;
  h.hull_lo_inverted[1] = ~uint64_t{0x1000};
  h.hull_hi[1] = 0x9000;  // writes only; the read hull is empty (all zero)
  const auto ranges = decode(h, nullptr, 0);
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0] == TouchedRange{0x1000, 0x9000, 2, 0});
  CHECK_FALSE(ranges[0].fine());
}

TEST_CASE("footprint table: the device layout is what the decoder assumes") {
  STATIC_REQUIRE(sizeof(Header) <= Layout::buckets);
  STATIC_REQUIRE(sizeof(Bucket) == 16);
  STATIC_REQUIRE(sizeof(Entry) == 24);
  STATIC_REQUIRE(Layout::coarse_buckets % 64 == 0);
  STATIC_REQUIRE(Layout::entries % 64 == 0);
  // One slot per context, on the device and pinned on the host: under 10 MiB.
  STATIC_REQUIRE(Layout::bytes < (uint64_t{10} << 20));
  // The fine level holds 1 GiB of touched memory, the coarse one 32 GiB more.
  STATIC_REQUIRE((uint64_t{kEntries} << kRegionShift) == (uint64_t{1} << 30));
  STATIC_REQUIRE((uint64_t{kCoarseEntries} << kCoarseRegionShift) == (uint64_t{32} << 30));
}
