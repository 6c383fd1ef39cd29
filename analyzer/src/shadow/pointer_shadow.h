// The pointer footprint tier's shadow: kernels whose only footprint is "this launch argument
// points at address a" (extent and direction unknown). Such an access is checked only where
// the evidence is specific, so that pointer-tier kernels do not drown a report:
//   - against a write of another tier that covers a (either order), and
//   - against another pointer-tier access with the same pointer value a.
// Pairs found here are *possible* races: a stronger tier (static summary, exact) confirms them.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "clock/vector_clock.h"
#include "model/op_stamp.h"
#include "shadow/shadow_memory.h"

namespace streamhaz::analysis {

class PointerShadow {
 public:
  // A pointer-tier access at `addr` by `op` (clock `now`): appends every earlier pointer-tier
  // access of the same address that is not ordered before `op`, then keeps `op` in place of
  // those it is ordered after (at most one per timeline remains).
  void access(uint64_t addr, const OpStamp& op, const VectorClock& now, std::vector<Conflict>& out);
  // A write of another tier over [lo, hi) by `op`: appends the pointer-tier accesses inside the
  // range that are not ordered before it. Cheap when no pointer access was ever recorded.
  void written(uint64_t lo, uint64_t hi, const OpStamp& op, const VectorClock& now, std::vector<Conflict>& out) const;
  // Fresh or released memory: forgets the pointer accesses inside [lo, hi).
  void forget(uint64_t lo, uint64_t hi);

  bool empty() const { return at_.empty(); }
  size_t addresses() const { return at_.size(); }

 private:
  std::map<uint64_t, std::vector<OpStamp>> at_;
};

}  // namespace streamhaz::analysis
