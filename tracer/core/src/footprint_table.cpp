#include "streamhaz/tracer/footprint_table.h"

#include <algorithm>

namespace streamhaz::tracer::footprint {
namespace {

constexpr uint64_t kGranule = uint64_t{1} << kGranuleShift;
constexpr unsigned kGranulesPerRegion = 1u << (kRegionShift - kGranuleShift);

// Appends [lo, hi) with `mode`, merging with the previous range when it continues it.
void append(std::vector<TouchedRange>& out, uint64_t lo, uint64_t hi, uint8_t mode) {
  if (!out.empty() && out.back().exact && out.back().mode == mode && out.back().hi == lo) {
    out.back().hi = hi;
    return;
  }
  out.push_back({lo, hi, mode, true});
}

}  // namespace

std::vector<TouchedRange> decode(const Header& header, const Entry* entries, uint32_t count) {
  std::vector<const Entry*> sorted;
  sorted.reserve(count);
  for (uint32_t i = 0; i < count; ++i) sorted.push_back(&entries[i]);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) { return a->region < b->region; });

  std::vector<TouchedRange> out;
  for (const Entry* e : sorted) {
    const uint64_t base = e->region << kRegionShift;
    for (unsigned g = 0; g < kGranulesPerRegion; ++g) {
      const uint8_t mode = static_cast<uint8_t>(((e->bits[0] >> g) & 1) | (((e->bits[1] >> g) & 1) << 1));
      if (mode) append(out, base + g * kGranule, base + (g + 1) * kGranule, mode);
    }
  }
  if (header.overflow) {
    for (int m = 0; m < 2; ++m)
      if (const uint64_t lo = ~header.hull_lo_inverted[m]; lo < header.hull_hi[m])
        out.push_back({lo, header.hull_hi[m], static_cast<uint8_t>(m + 1), false});
    std::sort(out.begin(), out.end(), [](const TouchedRange& a, const TouchedRange& b) { return a.lo < b.lo; });
  }
  return out;
}

}  // namespace streamhaz::tracer::footprint
