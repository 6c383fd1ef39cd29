// Device side of the exact footprint tier: Compute Sanitizer calls streamhaz_global_access
// before every global-memory instruction of a patched kernel, in every active thread, and
// streamhaz_async_copy before every cp.async (a global read into shared memory). It marks
// the 128-byte granules the warp touches in the launch's table (streamhaz/tracer/
// footprint_table.h: 32 KiB granules once the fine level is full), which the tracer reads back
// when the launch ends.
//
// Cost is what matters here: the call happens for every thread of every load and store. A warp
// whose lanes touch one region in one direction (a coalesced access, the common case) is reduced
// to one 64-bit granule mask with a shuffle butterfly, and one lane updates the table; the
// update reads the entry first and issues an atomic only for granules not yet marked, so a
// kernel streaming over a buffer pays the atomics once per granule, not once per access.
#include <sanitizer_patching.h>

#include "streamhaz/tracer/footprint_table.h"

namespace fp = streamhaz::tracer::footprint;

namespace {

__device__ __forceinline__ fp::Header* header_of(void* slot) { return static_cast<fp::Header*>(slot); }

// One level of the table: its buckets, entries, capacity and append counter.
struct Level {
  fp::Bucket* buckets;
  fp::Entry* entries;
  unsigned bucket_mask;
  uint32_t capacity;
  uint32_t* used;
};

__device__ __forceinline__ Level fine_level(void* slot) {
  char* base = static_cast<char*>(slot);
  const uint32_t limit = *reinterpret_cast<const uint32_t*>(base + fp::Layout::fine_limit);
  return {reinterpret_cast<fp::Bucket*>(base + fp::Layout::buckets), reinterpret_cast<fp::Entry*>(base + fp::Layout::entries),
          fp::kBuckets - 1, limit && limit < fp::kEntries ? limit : fp::kEntries, &header_of(slot)->used};
}
__device__ __forceinline__ Level coarse_level(void* slot) {
  char* base = static_cast<char*>(slot);
  return {reinterpret_cast<fp::Bucket*>(base + fp::Layout::coarse_buckets),
          reinterpret_cast<fp::Entry*>(base + fp::Layout::coarse_entries), fp::kCoarseBuckets - 1, fp::kCoarseEntries,
          &header_of(slot)->coarse_used};
}

__device__ __forceinline__ uint64_t load_volatile(const uint64_t* p) { return *reinterpret_cast<const volatile uint64_t*>(p); }
__device__ __forceinline__ uint32_t load_volatile(const uint32_t* p) { return *reinterpret_cast<const volatile uint32_t*>(p); }

// The entry of `region` in `level`, inserted if new; null when that level is full.
__device__ fp::Entry* find_or_insert(const Level& level, uint64_t region) {
  const uint64_t key = region + 1;
  uint32_t h = static_cast<uint32_t>((region * 0x9e3779b97f4a7c15ull) >> 40) & level.bucket_mask;
  for (unsigned probe = 0; probe < fp::kMaxProbes; ++probe, h = (h + 1) & level.bucket_mask) {
    fp::Bucket* b = &level.buckets[h];
    uint64_t seen = load_volatile(&b->key);
    if (seen == 0) {
      seen = atomicCAS(reinterpret_cast<unsigned long long*>(&b->key), 0ull, static_cast<unsigned long long>(key));
      if (seen == 0) {  // ours: take an entry and publish its index
        const uint32_t index = atomicAdd(level.used, 1u);
        if (index >= level.capacity) {
          atomicExch(&b->index, fp::kIndexOverflow);
          return nullptr;
        }
        fp::Entry* e = &level.entries[index];
        e->region = region;
        __threadfence();
        atomicExch(&b->index, index + 1);
        return e;
      }
    }
    if (seen != key) continue;
    uint32_t index;
    while ((index = load_volatile(&b->index)) == 0) {
    }  // the inserting thread publishes it right after its CAS
    return index == fp::kIndexOverflow ? nullptr : &level.entries[index - 1];
  }
  return nullptr;
}

// Widens the hull of a direction: neither level had room for [lo, hi).
__device__ void widen_hull(void* slot, unsigned direction, uint64_t lo, uint64_t hi) {
  fp::Header* h = header_of(slot);
  if (!load_volatile(&h->overflow)) atomicExch(&h->overflow, 1u);
  if (load_volatile(&h->hull_lo_inverted[direction]) < ~lo)
    atomicMax(reinterpret_cast<unsigned long long*>(&h->hull_lo_inverted[direction]), ~lo);
  if (load_volatile(&h->hull_hi[direction]) < hi) atomicMax(reinterpret_cast<unsigned long long*>(&h->hull_hi[direction]), hi);
}

__device__ __forceinline__ void set_bits(fp::Entry* e, unsigned d, uint64_t granules) {
  if ((load_volatile(&e->bits[d]) & granules) != granules)
    atomicOr(reinterpret_cast<unsigned long long*>(&e->bits[d]), granules);
}

// Marks granules of one fine region; when the fine level is full, the same bytes at the coarse
// level's 32 KiB granules; when that is full too, the hull.
__device__ void mark(void* slot, uint64_t region, unsigned directions, uint64_t granules) {
  if (fp::Entry* e = find_or_insert(fine_level(slot), region)) {
    for (unsigned d = 0; d < 2; ++d)
      if (directions & (1u << d)) set_bits(e, d, granules);
    return;
  }
  const uint64_t base = region << fp::kRegionShift;
  const uint64_t lo = base + (uint64_t(__ffsll(static_cast<long long>(granules)) - 1) << fp::kGranuleShift);
  const uint64_t hi = base + (uint64_t(64 - __clzll(static_cast<long long>(granules))) << fp::kGranuleShift);
  constexpr unsigned kShift = fp::kCoarseRegionShift - fp::kCoarseGranuleShift;
  const unsigned first = (lo >> fp::kCoarseGranuleShift) & ((1u << kShift) - 1);
  const unsigned last = ((hi - 1) >> fp::kCoarseGranuleShift) & ((1u << kShift) - 1);
  const uint64_t coarse_granules = (~0ull >> (63 - last)) & (~0ull << first);
  fp::Entry* e = find_or_insert(coarse_level(slot), lo >> fp::kCoarseRegionShift);
  for (unsigned d = 0; d < 2; ++d) {
    if (!(directions & (1u << d))) continue;
    if (e) set_bits(e, d, coarse_granules);
    else widen_hull(slot, d, lo, hi);
  }
}

__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// The granules of [lo, hi) inside `region` (hi > lo, both inside it).
__device__ __forceinline__ uint64_t granule_mask(uint64_t lo, uint64_t hi) {
  const unsigned first = (lo >> fp::kGranuleShift) & 63, last = ((hi - 1) >> fp::kGranuleShift) & 63;
  return (~0ull >> (63 - last)) & (~0ull << first);
}

// Marks [lo, hi) in `directions` for the calling thread, combined across a coalesced warp.
__device__ void record_access(void* userdata, uint64_t lo, uint64_t hi, unsigned directions) {
  const unsigned mask = __activemask();
  const uint64_t region = lo >> fp::kRegionShift;
  const bool fits = ((hi - 1) >> fp::kRegionShift) == region;
  // Tool patches may not use the warp-reduction instruction (redux): a full warp combines its
  // granule masks with a shuffle butterfly instead; a partial warp takes the per-lane path.
  if (mask == 0xffffffffu) {
    int same_region = 0, same_directions = 0;
    __match_all_sync(mask, region, &same_region);
    __match_all_sync(mask, directions, &same_directions);
    if (__all_sync(mask, fits) && same_region && same_directions) {
      if (!directions) return;
      uint64_t granules = granule_mask(lo, hi);
      for (int offset = 16; offset > 0; offset >>= 1) granules |= __shfl_xor_sync(mask, granules, offset);
      if (lane_id() == 0) mark(userdata, region, directions, granules);
      return;
    }
  }
  // Scattered lanes: each marks its own bytes (an access may straddle two regions).
  if (!directions) return;
  for (uint64_t r = region; r <= ((hi - 1) >> fp::kRegionShift); ++r) {
    const uint64_t rlo = r == region ? lo : r << fp::kRegionShift;
    const uint64_t rhi = (r + 1) << fp::kRegionShift < hi ? (r + 1) << fp::kRegionShift : hi;
    mark(userdata, r, directions, granule_mask(rlo, rhi));
  }
}

}  // namespace

extern "C" __device__ __noinline__ SanitizerPatchResult streamhaz_global_access(void* userdata, uint64_t, void* ptr,
                                                                              uint32_t size, uint32_t flags,
                                                                              const void*) {
  if (!userdata) return SANITIZER_PATCH_SUCCESS;
  // Atomics report both flags; a prefetch touches nothing.
  unsigned directions = ((flags & SANITIZER_MEMORY_DEVICE_FLAG_READ) ? 1u : 0u) |
                        ((flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE) ? 2u : 0u);
  if (flags & SANITIZER_MEMORY_DEVICE_FLAG_ATOMSYS) directions = 3;
  if (flags & SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH) directions = 0;
  const uint64_t lo = reinterpret_cast<uint64_t>(ptr);
  record_access(userdata, lo, lo + (size ? size : 1), directions);
  return SANITIZER_PATCH_SUCCESS;
}

// cp.async (LDGSTS): a global read into shared memory; `src` is null when nothing is copied.
extern "C" __device__ __noinline__ SanitizerPatchResult streamhaz_async_copy(void* userdata, uint64_t, void* src,
                                                                           uint32_t, uint32_t size) {
  if (!userdata) return SANITIZER_PATCH_SUCCESS;
  const uint64_t lo = reinterpret_cast<uint64_t>(src);
  record_access(userdata, lo, lo + (size ? size : 1), src ? 1u : 0u);
  return SANITIZER_PATCH_SUCCESS;
}
