// What the program told us about its memory: live allocations (base, size, kind, device)
// and the names it gave byte ranges. Used to locate conflicting bytes in a finding and to
// decide which side of a copy is host memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

struct Allocation {
  uint64_t base = 0;
  uint64_t bytes = 0;
  trace::AllocKind kind = trace::AllocKind::Device;
  uint32_t device = 0;
  uint64_t ordinal = 0;  // n-th allocation of the rank: stable across runs, unlike addresses
};

struct NamedRange {
  uint64_t base = 0;
  uint64_t bytes = 0;
  trace::StringId name = 0;
};

class AddressBook {
 public:
  void allocate(const trace::Alloc& a);
  // Removes the allocation at `ptr` (and names inside it); returns it, if it was known.
  std::optional<Allocation> release(uint64_t ptr);
  void name(const trace::BufferName& n);

  const Allocation* allocation_at(uint64_t addr) const;
  const NamedRange* name_at(uint64_t addr) const;
  // True when `addr` is known device (or managed) memory, false when known host memory,
  // nullopt when untracked.
  std::optional<bool> is_device(uint64_t addr) const;

 private:
  std::map<uint64_t, Allocation> allocations_;
  std::map<uint64_t, NamedRange> names_;
  uint64_t allocations_seen_ = 0;
};

}  // namespace streamhaz::analysis
