#include "shadow/pointer_shadow.h"

#include <algorithm>

namespace streamhaz::analysis {
namespace {

bool unordered(const OpStamp& prev, const OpStamp& op, const VectorClock& now) {
  return prev.valid() && !(prev == op) && !now.covers(prev.epoch);
}

// Extent and direction unknown: the pointer side is a possible write.
Conflict pointer_conflict(const OpStamp& prev, uint64_t addr) {
  return Conflict{prev, trace::AccessMode::ReadWrite, addr, addr == UINT64_MAX ? addr : addr + 1};
}

}  // namespace

void PointerShadow::access(uint64_t addr, const OpStamp& op, const VectorClock& now, std::vector<Conflict>& out) {
  std::vector<OpStamp>& seen = at_[addr];
  for (const OpStamp& prev : seen)
    if (unordered(prev, op, now)) out.push_back(pointer_conflict(prev, addr));
  // An access ordered before this one is covered by it: a later operation not ordered after
  // this one is reported against it anyway, and one ordered after it is ordered after both.
  std::erase_if(seen, [&](const OpStamp& prev) { return prev == op || now.covers(prev.epoch); });
  seen.push_back(op);
}

void PointerShadow::written(uint64_t lo, uint64_t hi, const OpStamp& op, const VectorClock& now,
                            std::vector<Conflict>& out) const {
  if (at_.empty() || lo >= hi) return;
  for (auto it = at_.lower_bound(lo); it != at_.end() && it->first < hi; ++it)
    for (const OpStamp& prev : it->second)
      if (unordered(prev, op, now)) out.push_back(pointer_conflict(prev, it->first));
}

void PointerShadow::forget(uint64_t lo, uint64_t hi) {
  if (at_.empty() || lo >= hi) return;
  at_.erase(at_.lower_bound(lo), at_.lower_bound(hi));
}

}  // namespace streamhaz::analysis
