#include "streamhaz/tracer/footprint_table.h"

#include <algorithm>

namespace streamhaz::tracer::footprint {
namespace {

// Appends [lo, hi) with `mode`, merging with the previous range when it continues it at the
// same resolution.
void append(std::vector<TouchedRange>& out, uint64_t lo, uint64_t hi, uint8_t mode, uint32_t granule) {
  if (!out.empty() && out.back().granule == granule && out.back().mode == mode && out.back().hi == lo) {
    out.back().hi = hi;
    return;
  }
  out.push_back({lo, hi, mode, granule});
}

// One level's entries, each region's granules in address order.
void decode_level(const Entry* entries, uint32_t count, unsigned region_shift, unsigned granule_shift,
                  std::vector<TouchedRange>& out) {
  std::vector<const Entry*> sorted;
  sorted.reserve(count);
  for (uint32_t i = 0; i < count; ++i) sorted.push_back(&entries[i]);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) { return a->region < b->region; });
  const uint64_t granule = uint64_t{1} << granule_shift;
  const unsigned per_region = 1u << (region_shift - granule_shift);
  for (const Entry* e : sorted) {
    const uint64_t base = e->region << region_shift;
    for (unsigned g = 0; g < per_region; ++g) {
      const uint8_t mode = static_cast<uint8_t>(((e->bits[0] >> g) & 1) | (((e->bits[1] >> g) & 1) << 1));
      if (mode) append(out, base + g * granule, base + (g + 1) * granule, mode, static_cast<uint32_t>(granule));
    }
  }
}

}  // namespace

std::vector<TouchedRange> decode(const Header& header, const Entry* entries, uint32_t count, const Entry* coarse,
                                 uint32_t coarse_count) {
  std::vector<TouchedRange> out;
  decode_level(entries, count, kRegionShift, kGranuleShift, out);
  if (coarse) decode_level(coarse, coarse_count, kCoarseRegionShift, kCoarseGranuleShift, out);
  if (header.overflow)
    for (int m = 0; m < 2; ++m)
      if (const uint64_t lo = ~header.hull_lo_inverted[m]; lo < header.hull_hi[m])
        out.push_back({lo, header.hull_hi[m], static_cast<uint8_t>(m + 1), 0});
  std::stable_sort(out.begin(), out.end(), [](const TouchedRange& a, const TouchedRange& b) { return a.lo < b.lo; });
  return out;
}

}  // namespace streamhaz::tracer::footprint
