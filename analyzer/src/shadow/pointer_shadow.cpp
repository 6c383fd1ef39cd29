#include "shadow/pointer_shadow.h"

#include <algorithm>

#include "engine/pointer_evidence.h"

namespace streamhaz::analysis {
namespace {

bool unordered(const OpStamp& prev, const OpStamp& op, const VectorClock& now) {
  return prev.valid() && !(prev == op) && !now.covers(prev.epoch);
}

bool writes(trace::AccessMode m) { return uint8_t(m) & uint8_t(trace::AccessMode::Write); }

Conflict pointer_conflict(const PointerUse& prev, uint64_t addr) {
  return Conflict{prev.op, prev.role, addr, addr == UINT64_MAX ? addr : addr + 1};
}

}  // namespace

void PointerShadow::access(uint64_t addr, const PointerUse& use, const VectorClock& now, std::vector<Conflict>& out,
                           std::vector<Conflict>* ordered) {
  std::vector<PointerUse>& seen = at_[addr];
  for (const PointerUse& prev : seen) {
    if (unordered(prev.op, use.op, now)) out.push_back(pointer_conflict(prev, addr));
    else if (ordered && !(prev.op == use.op) && now.rests_on_sites(prev.op.epoch))
      ordered->push_back(pointer_conflict(prev, addr));
  }
  if (keep_all_) {
    std::erase_if(seen, [&](const PointerUse& prev) { return prev.op == use.op; });
    seen.push_back(use);
    return;
  }
  // An access ordered before this one is covered by it: a later operation not ordered after
  // this one is reported against it anyway, and one ordered after it is ordered after both.
  // Covered only by an access at least as strong as evidence: a directed read does not cover a
  // write, so that a later write unordered with both still meets the write.
  const int strength = pointer_strength(use.op, use.role);
  std::erase_if(seen, [&](const PointerUse& prev) {
    return prev.op == use.op || (now.covers(prev.op.epoch) && pointer_strength(prev.op, prev.role) <= strength);
  });
  seen.push_back(use);
}

void PointerShadow::touched(uint64_t lo, uint64_t hi, trace::AccessMode mode, const OpStamp& op, const VectorClock& now,
                            std::vector<Conflict>& out, std::vector<Conflict>* ordered) const {
  if (at_.empty() || lo >= hi) return;
  for (auto it = at_.lower_bound(lo); it != at_.end() && it->first < hi; ++it)
    for (const PointerUse& prev : it->second) {
      if (!writes(mode) && !writes(prev.role)) continue;
      if (unordered(prev.op, op, now)) out.push_back(pointer_conflict(prev, it->first));
      else if (ordered && !(prev.op == op) && now.rests_on_sites(prev.op.epoch))
        ordered->push_back(pointer_conflict(prev, it->first));
    }
}

void PointerShadow::forget(uint64_t lo, uint64_t hi) {
  if (at_.empty() || lo >= hi) return;
  at_.erase(at_.lower_bound(lo), at_.lower_bound(hi));
}

}  // namespace streamhaz::analysis
