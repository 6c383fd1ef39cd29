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

// `meets_unknown`: the access meets every kernel of unknown footprint since the last write (a
// write, a fence); a read, or another such kernel, only the phantoms.
void check(const ShadowCell& cell, uint64_t lo, uint64_t hi, bool is_write, bool meets_unknown, const OpStamp& op,
           const VectorClock& now, std::vector<Conflict>& out, std::vector<Conflict>* ordered) {
  auto meet = [&](const OpStamp& prev, AccessMode role) {
    if (unordered(prev, op, now)) note(out, prev, role, lo, hi);
    else if (ordered && ordered_by_sites(prev, op, now)) note(*ordered, prev, role, lo, hi);
  };
  meet(cell.writer, AccessMode::Write);
  if (meets_unknown)
    for (const OpStamp& p : cell.unknown) meet(p, AccessMode::ReadWrite);
  else
    for (const OpStamp& p : cell.phantoms) meet(p, AccessMode::ReadWrite);
  if (!is_write) return;
  for (const OpStamp& r : cell.readers) meet(r, AccessMode::Read);
}

}  // namespace

void ShadowMemory::access(uint64_t lo, uint64_t hi, AccessMode mode, const OpStamp& op, const VectorClock& now,
                          std::vector<Conflict>& out, std::vector<Conflict>* ordered, Phantom phantom) {
  out.clear();
  if (ordered) ordered->clear();
  const bool is_write = phantom != Phantom::No || writes(mode);
  const bool meets_unknown = phantom == Phantom::Lasting || (phantom == Phantom::No && is_write);
  cells_.update(lo, hi, [&](uint64_t a, uint64_t b, ShadowCell& cell) {
    check(cell, a, b, is_write, meets_unknown, op, now, out, ordered);
    if (phantom != Phantom::No) {  // conflicts like a write, hides nothing
      if (!cell.unknown.empty() && cell.unknown.back() == op) return;  // the same kernel's next range
      cell.unknown.push_back(op);
      // The latest phantom of a stream stands for the stream's earlier ones here (they stay
      // readers); lasting ones stay.
      if (phantom == Phantom::Yes)
        std::erase_if(cell.phantoms, [&](const OpStamp& p) {
          return p.stream_slot == op.stream_slot && !(p.flags & kOpLastingPhantom);
        });
      OpStamp kept = op;
      if (phantom == Phantom::Lasting) kept.flags |= kOpLastingPhantom;
      cell.phantoms.push_back(kept);
      return;
    }
    if (is_write) {
      cell.writer = op;
      cell.readers.clear();
      cell.unknown.clear();
      cell.phantoms.clear();
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
  cells_.visit(lo, hi, [&](uint64_t a, uint64_t b, const ShadowCell& cell) {
    check(cell, a, b, true, true, op, now, out, ordered);
  });
  cells_.erase(lo, hi);
}

}  // namespace streamhaz::analysis
