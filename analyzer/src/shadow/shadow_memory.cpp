#include "shadow/shadow_memory.h"

#include <algorithm>

namespace streamhaz::analysis {
namespace {

using trace::AccessMode;

bool writes(AccessMode m) { return static_cast<uint8_t>(m) & static_cast<uint8_t>(AccessMode::Write); }

// Earlier op `prev` conflicts with the current access unless it is the same operation or
// happens before it.
bool unordered(const OpStamp& prev, const OpStamp& op, const VectorClock& now) {
  return prev.valid() && !(prev == op) && !now.covers(prev.epoch);
}

void note(std::vector<Conflict>& out, const OpStamp& prev, AccessMode role, uint64_t lo, uint64_t hi) {
  for (Conflict& c : out) {
    if (c.first == prev && c.first_role == role) {
      c.lo = std::min(c.lo, lo);
      c.hi = std::max(c.hi, hi);
      return;
    }
  }
  out.push_back(Conflict{prev, role, lo, hi});
}

// Ordered, but only through synchronisation sites (the over-synchronisation pass).
bool ordered_by_sites(const OpStamp& prev, const OpStamp& op, const VectorClock& now) {
  return prev.valid() && !(prev == op) && now.rests_on_sites(prev.epoch);
}

void check(const ShadowCell& cell, uint64_t lo, uint64_t hi, bool is_write, const OpStamp& op,
           const VectorClock& now, std::vector<Conflict>& out, std::vector<Conflict>* ordered) {
  if (unordered(cell.writer, op, now)) note(out, cell.writer, AccessMode::Write, lo, hi);
  else if (ordered && ordered_by_sites(cell.writer, op, now)) note(*ordered, cell.writer, AccessMode::Write, lo, hi);
  if (!is_write) return;
  for (const OpStamp& r : cell.readers) {
    if (unordered(r, op, now)) note(out, r, AccessMode::Read, lo, hi);
    else if (ordered && ordered_by_sites(r, op, now)) note(*ordered, r, AccessMode::Read, lo, hi);
  }
}

}  // namespace

void ShadowMemory::access(uint64_t lo, uint64_t hi, AccessMode mode, const OpStamp& op, const VectorClock& now,
                          std::vector<Conflict>& out, std::vector<Conflict>* ordered) {
  out.clear();
  if (ordered) ordered->clear();
  const bool is_write = writes(mode);
  cells_.update(lo, hi, [&](uint64_t a, uint64_t b, ShadowCell& cell) {
    check(cell, a, b, is_write, op, now, out, ordered);
    if (is_write) {
      cell.writer = op;
      cell.readers.clear();
      return;
    }
    if (keep_all_readers_) {
      // One operation's ranges are applied one after another: it can only be the last reader.
      if (cell.readers.empty() || !(cell.readers.back() == op)) cell.readers.push_back(op);
      return;
    }
    // Readers ordered before this read are subsumed by it: a later write ordered after this
    // read is ordered after them too, and one that is not races with this read anyway.
    std::erase_if(cell.readers, [&](const OpStamp& r) { return now.covers(r.epoch); });
    cell.readers.push_back(op);
  });
}

void ShadowMemory::release(uint64_t lo, uint64_t hi, const OpStamp& op, const VectorClock& now,
                           std::vector<Conflict>& out, std::vector<Conflict>* ordered) {
  out.clear();
  if (ordered) ordered->clear();
  cells_.visit(lo, hi,
               [&](uint64_t a, uint64_t b, const ShadowCell& cell) { check(cell, a, b, true, op, now, out, ordered); });
  cells_.erase(lo, hi);
}

}  // namespace streamhaz::analysis
