// The pointer footprint tier's shadow: kernels whose footprint is "this launch argument points at
// address a", extent unknown, direction known only where a calling convention gives it
// (tracer/core/include/streamhaz/tracer/operand_roles.h). Such an access is checked only where
// the evidence is specific, so that pointer-tier kernels do not drown a report:
//   - against an access of another tier that covers a (either order), and
//   - against another pointer-tier access with the same pointer value a.
// Which pairs are races and which only possible races is pointer_evidence.h's decision.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "clock/vector_clock.h"
#include "model/op_stamp.h"
#include "shadow/shadow_memory.h"

namespace streamhaz::analysis {

// One pointer argument of a launch: its operation and role (Read, Write, or ReadWrite: unknown).
struct PointerUse {
  OpStamp op;
  trace::AccessMode role = trace::AccessMode::ReadWrite;
};

class PointerShadow {
 public:
  // A pointer-tier access at `addr` by `use.op` (clock `now`): appends every earlier pointer-tier
  // access of the same address that is not ordered before it (first_role: that access's role),
  // then keeps `use` in place of those it is ordered after (at most one per timeline remains).
  // With `ordered` (the over-synchronisation pass), the accesses ordered before it only through
  // synchronisation sites go there (appended).
  void access(uint64_t addr, const PointerUse& use, const VectorClock& now, std::vector<Conflict>& out,
              std::vector<Conflict>* ordered = nullptr);
  // An access of another tier over [lo, hi) by `op` in `mode`: appends the pointer-tier accesses
  // inside the range that are not ordered before it and could conflict with it (for a read:
  // those that write or whose direction is unknown). Cheap when no pointer access was recorded.
  void touched(uint64_t lo, uint64_t hi, trace::AccessMode mode, const OpStamp& op, const VectorClock& now,
               std::vector<Conflict>& out, std::vector<Conflict>* ordered = nullptr) const;
  // Fresh or released memory: forgets the pointer accesses inside [lo, hi).
  void forget(uint64_t lo, uint64_t hi);

  // Keep every access instead of those not ordered before a later one (ShadowMemory's twin).
  void keep_all(bool keep) { keep_all_ = keep; }

  bool empty() const { return at_.empty(); }
  size_t addresses() const { return at_.size(); }

 private:
  std::map<uint64_t, std::vector<PointerUse>> at_;
  bool keep_all_ = false;
};

}  // namespace streamhaz::analysis
