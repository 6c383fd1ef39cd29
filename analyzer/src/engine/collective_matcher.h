// Cross-rank edges of NCCL collectives. A call ends only after every rank whose data it
// receives has started its call: for all-reduce, all-gather, reduce-scatter and all-to-all
// that is every rank; for a broadcast or scatter, the root (the root itself receives
// nothing); for a reduce or gather, the root receives from every rank and the others from
// none. Each rank posts the clock at which its call started (matched by communicator hash
// and sequence number); once all `nranks` have posted, every rank's stream joins, after its
// own call, the start clocks of the ranks it received from. Ranks are analysed in lockstep:
// a rank that posted waits until the others arrive.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "clock/vector_clock.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

using CollectiveKey = std::pair<uint64_t, uint64_t>;  // communicator hash, sequence number

inline bool is_collective(const trace::Nccl& n) {
  return n.nranks > 1 && n.kind != trace::NcclKind::Send && n.kind != trace::NcclKind::Recv;
}

class CollectiveMatcher {
 public:
  // Posts one rank's start clock; true when that rank must wait for the others.
  bool post(const trace::Nccl& n, const VectorClock& start);
  bool ready(const CollectiveKey& k) const;
  // The start clocks of the ranks whose data the call of communicator rank `comm_rank`
  // receives (empty when the ranks disagree about the call).
  VectorClock take(const CollectiveKey& k, uint32_t comm_rank);
  // No rank can move: ends every wait with the start clocks posted so far (fewer edges).
  void release_all();

  uint64_t partial() const { return partial_; }        // collectives not every rank reached
  uint64_t mismatched() const { return mismatched_; }  // same key, different call

 private:
  struct Pending {
    trace::NcclKind kind;
    uint64_t count;
    uint32_t nranks;
    int32_t root;
    VectorClock joined;      // every start posted
    VectorClock root_start;  // the root's start (rooted collectives)
    uint32_t posted = 0;
    uint32_t waiting = 0;  // posted and not yet taken
    bool released = false;
    bool mismatch = false;
  };
  void forget_if_done(std::map<CollectiveKey, Pending>::iterator it);

  std::map<CollectiveKey, Pending> pending_;
  uint64_t partial_ = 0;
  uint64_t mismatched_ = 0;
};

}  // namespace streamhaz::analysis
