// How strong a conflict is when one side is known only from the pointer footprint tier: a kernel
// was given a pointer into the bytes (extent unknown; direction known where a calling convention
// gives it, trace-format.md "access"). The rule, measured on real training jobs
// (docs/footprints.md, "How strong pointer evidence is"):
//   - a kernel given a pointer to a byte touches it (PyTorch launches no kernel for an empty
//     tensor, and a kernel's tensor arguments are what it reads or writes); so a pointer-only
//     kernel and an unordered write of that byte are a race, and so is a kernel whose convention
//     says it writes the byte against any unordered access of it;
//   - without a direction on either side and no write known, the pair is only possible: two
//     kernels may both just read a tensor, which is no race;
//   - a pointer that a kernel's stronger footprint (exact, static) does not cover is evidence
//     of the weakest kind: it only ever makes possible races.
#pragma once

#include <cstdint>

#include "model/op_stamp.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

enum class Evidence : uint8_t { None, Possible, Race };

inline bool mode_writes(trace::AccessMode m) { return uint8_t(m) & uint8_t(trace::AccessMode::Write); }

// A pointer-tier side: a directed write (Write), unknown (ReadWrite) or a directed read (Read).
inline bool pointer_side(const OpStamp& op) { return op.tier == trace::FootprintTier::Pointer; }
inline bool weak_pointer(const OpStamp& op) { return op.flags & kOpPointerFallback; }

// One side of a pair: what it did to the byte and whether it is pointer evidence.
struct Side {
  const OpStamp& op;
  trace::AccessMode role;
  bool pointer() const { return pointer_side(op); }
  bool directed_write() const { return pointer() ? role == trace::AccessMode::Write : mode_writes(role); }
  bool surely_reads_only() const { return role == trace::AccessMode::Read; }
  bool may_write() const { return mode_writes(role); }
};

inline Evidence judge(const Side& a, const Side& b) {
  if (a.surely_reads_only() && b.surely_reads_only()) return Evidence::None;
  if (!a.may_write() && !b.may_write()) return Evidence::None;
  if (!a.pointer() && !b.pointer()) return Evidence::Race;  // both ranged: the ordinary rule
  if ((a.pointer() && weak_pointer(a.op)) || (b.pointer() && weak_pointer(b.op))) return Evidence::Possible;
  // A ranged side: a write there, or a directed write on the pointer side, is a race.
  const Side& p = a.pointer() ? a : b;
  const Side& o = a.pointer() ? b : a;
  if (!o.pointer()) {
    if (mode_writes(o.role)) return Evidence::Race;
    return p.directed_write() ? Evidence::Race : Evidence::None;
  }
  // Two pointer sides on one address: a directed write on either is a race.
  if (a.directed_write() || b.directed_write()) return Evidence::Race;
  return Evidence::Possible;
}

// Which of two pointer uses of one address a later access is best checked against: a directed
// write above an unknown direction above a directed read, and pointer-only above fallback.
inline int pointer_strength(const OpStamp& op, trace::AccessMode role) {
  const int direction = role == trace::AccessMode::Write ? 2 : role == trace::AccessMode::ReadWrite ? 1 : 0;
  return direction * 2 + (weak_pointer(op) ? 0 : 1);
}

}  // namespace streamhaz::analysis
