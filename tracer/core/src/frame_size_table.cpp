#include "streamhaz/tracer/frame_size_table.h"

namespace streamhaz::tracer {

namespace {
constexpr size_t kProbes = 32;  // a full neighbourhood leaves the address to slow walks

size_t slot_of(uint64_t ip, size_t mask) { return size_t((ip * 0x9E3779B97F4A7C15ull) >> 20) & mask; }
}  // namespace

FrameSizeTable::FrameSizeTable(size_t slots_log2)
    : slots_(new Slot[size_t(1) << slots_log2]), mask_((size_t(1) << slots_log2) - 1) {}

void FrameSizeTable::store(uint64_t ip, uint32_t size, bool only_if_new, bool& conflict) {
  conflict = false;
  if (ip == 0) return;
  const uint64_t gen = generation_.load(std::memory_order_acquire);
  for (size_t probe = 0, i = slot_of(ip, mask_); probe < kProbes; ++probe, i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    uint64_t held = s.ip.load(std::memory_order_acquire);
    if (held == 0) {
      if (!s.ip.compare_exchange_strong(held, ip, std::memory_order_acq_rel)) {
        if (held != ip) continue;  // another thread took the slot for another address
      } else {
        learned_.fetch_add(1, std::memory_order_relaxed);
      }
    } else if (held != ip) {
      continue;
    }
    const uint64_t value = s.value.load(std::memory_order_acquire);
    const bool current = (value >> 32) == gen && uint32_t(value) != kUnknown;
    if (current && only_if_new) {
      const uint32_t had = uint32_t(value);
      if (had == size || had == kVaries) return;
      conflict = true;
      size = kVaries;
    }
    s.value.store(gen << 32 | size, std::memory_order_release);
    // Counted after: a walk that reads the new count finds the new answer, so it never keeps an
    // old answer under the new count.
    changes_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
}

bool FrameSizeTable::learn(uint64_t ip, uint32_t size) {
  bool conflict = false;
  store(ip, size == 0 || size > kMaxSize ? kVaries : size, /*only_if_new=*/true, conflict);
  return !conflict;
}

void FrameSizeTable::learn_outermost(uint64_t ip) {
  bool conflict = false;
  store(ip, kOutermost, /*only_if_new=*/true, conflict);
}

uint32_t FrameSizeTable::find(uint64_t ip) const {
  const uint64_t gen = generation_.load(std::memory_order_acquire);
  for (size_t probe = 0, i = slot_of(ip, mask_); probe < kProbes; ++probe, i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    const uint64_t held = s.ip.load(std::memory_order_acquire);
    if (held == 0) return kUnknown;
    if (held != ip) continue;
    const uint64_t value = s.value.load(std::memory_order_acquire);
    return (value >> 32) == gen ? uint32_t(value) : kUnknown;
  }
  return kUnknown;
}

}  // namespace streamhaz::tracer
