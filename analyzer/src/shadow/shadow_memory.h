// Shadow memory of one address space (one rank's process): per byte range, the last writer
// and the readers since that write (FastTrack, by range instead of by word). An access is
// checked against the range's history with the accessing operation's vector clock; every
// conflicting earlier operation that is not ordered before it is reported once per access.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/vector_clock.h"
#include "model/op_stamp.h"
#include "shadow/interval_map.h"

namespace streamhaz::analysis {

struct ShadowCell {
  OpStamp writer;                // !valid(): no write since the range was allocated
  // Reads since that write not ordered before a later read. In the over-synchronisation pass
  // also its phantoms: kernels of unknown footprint since that write, which may have read and
  // written these bytes (kOpPhantom). A later write meets every one, as it meets reads; the latest
  // of each stream, and every fence (it stands for a stream's work outside the judged window), is
  // met by every later access, as a write is (kOpLatestPhantom, kOpLastingPhantom). None hides
  // what came before it (the bytes may be untouched); the next write replaces them.
  std::vector<OpStamp> readers;

  bool empty() const { return !writer.valid() && readers.empty(); }
  bool operator==(const ShadowCell& o) const { return writer == o.writer && readers == o.readers; }
};

// One unordered conflicting pair found by an access: the earlier operation, what it did,
// and the bytes (the span of all pieces where the pair conflicted).
struct Conflict {
  OpStamp first;
  trace::AccessMode first_role;
  uint64_t lo, hi;
};

class ShadowMemory {
 public:
  // Checks and records an access of [lo, hi) by `op`, whose clock is `now`. Conflicts found
  // are appended to `out` (cleared first), one per earlier operation and role. With `ordered`,
  // conflicting pairs that `now` orders only through synchronisation sites (clock/witness.h)
  // are appended there (cleared first) the same way.
  // `phantom`: the access of a kernel of unknown footprint (ShadowCell::phantoms), whatever `mode`;
  // a lasting one (a fence) is not replaced by later phantoms of its stream.
  enum class Phantom : uint8_t { No, Yes, Lasting };
  void access(uint64_t lo, uint64_t hi, trace::AccessMode mode, const OpStamp& op, const VectorClock& now,
              std::vector<Conflict>& out, std::vector<Conflict>* ordered = nullptr, Phantom phantom = Phantom::No);
  // Checks [lo, hi) like a write by `op` (freeing memory), then forgets its history.
  void release(uint64_t lo, uint64_t hi, const OpStamp& op, const VectorClock& now, std::vector<Conflict>& out,
               std::vector<Conflict>* ordered = nullptr);
  // Keep every read since the last write instead of forgetting those ordered before a later
  // read (AnalysisOptions::keep_all_readers): more to check at the next write, but which pairs
  // are checked no longer depends on the order.
  void keep_all_readers(bool keep) { keep_all_readers_ = keep; }
  // Phantoms may occur (the pass's checks): reads look among the readers for them too.
  void expect_phantoms(bool expect) { phantoms_ = expect; }
  // Forgets the history of [lo, hi) (fresh allocation).
  void forget(uint64_t lo, uint64_t hi) { cells_.erase(lo, hi); }

  const IntervalMap<ShadowCell>& cells() const { return cells_; }
  void prefetch() const { cells_.prefetch(); }

 private:
  IntervalMap<ShadowCell> cells_;
  void access_for_pass(uint64_t lo, uint64_t hi, trace::AccessMode mode, const OpStamp& op, const VectorClock& now,
                       std::vector<Conflict>& out, std::vector<Conflict>* ordered, Phantom phantom);

  bool keep_all_readers_ = false;
  bool phantoms_ = false;
};

}  // namespace streamhaz::analysis
