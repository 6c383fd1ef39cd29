// Shadow memory of one address space (one rank's process): per byte range, the last writer
// and the readers since that write (FastTrack, by range instead of by word). An access is
// checked against the range's history with the accessing operation's vector clock; every
// conflicting earlier operation that is not ordered before it is reported once per access.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "clock/vector_clock.h"
#include "model/op_stamp.h"
#include "shadow/interval_map.h"
#include "shadow/access_index.h"
#include "shadow/pair_notes.h"
#include "shadow/phantom_index.h"

namespace streamhaz::analysis {

// The over-synchronisation pass's phantoms of a cell: kernels of unknown footprint since its last
// write, which may have read and written these bytes. A later write meets every one, as it meets
// reads (`all`); every later access meets the latest of each stream, and every fence (it stands
// for a stream's work outside the judged window), as it meets a write (`latest`). None hides what
// came before it (the bytes may be untouched); the next write replaces them.
struct Phantoms {
  std::vector<OpStamp> all;
  std::vector<OpStamp> latest;
  bool operator==(const Phantoms&) const = default;
};

struct ShadowCell {
  OpStamp writer;                // !valid(): no write since the range was allocated
  std::vector<OpStamp> readers;  // reads since that write not ordered before a later read
  // Only in the pass's checks, and only where a phantom touched the bytes: apart, so that the race
  // check's cells stay small (a copy of a cell copies them).
  std::unique_ptr<Phantoms> phantoms;

  ShadowCell() = default;
  ShadowCell(const ShadowCell& o) : writer(o.writer), readers(o.readers) {
    if (o.phantoms) phantoms = std::make_unique<Phantoms>(*o.phantoms);
  }
  ShadowCell& operator=(const ShadowCell& o) {
    writer = o.writer;
    readers = o.readers;
    phantoms = o.phantoms ? std::make_unique<Phantoms>(*o.phantoms) : nullptr;
    return *this;
  }
  ShadowCell(ShadowCell&&) noexcept = default;
  ShadowCell& operator=(ShadowCell&&) noexcept = default;

  bool empty() const { return !writer.valid() && readers.empty() && !phantoms; }
  bool operator==(const ShadowCell& o) const {
    return writer == o.writer && readers == o.readers &&
           (phantoms ? o.phantoms && *phantoms == *o.phantoms : !o.phantoms);
  }
};

class ShadowMemory {
 public:
  // Checks and records an access of [lo, hi) by `op`, whose clock is `now`. Conflicts found
  // are appended to `out` (cleared first), one per earlier operation and role. With `ordered`,
  // conflicting pairs that `now` orders only through synchronisation sites (clock/witness.h)
  // are appended there (cleared first) the same way.
  // `phantom`: the access of a kernel of unknown footprint (ShadowCell::phantoms), whatever `mode`;
  // a lasting one (a fence) is not replaced by later phantoms of its stream.
  // `Ordered::LatestPerTimeline`: of the writers and readers `ordered` would get, the caller keeps
  // only the latest of each timeline (no graph operation's), so the others may be left out; a
  // phantom over all memory then meets the writers, readers and phantoms kept through their
  // indexes instead of a walk over every cell (the pairs and their bytes are the walk's).
  enum class Phantom : uint8_t { No, Yes, Lasting };
  enum class Ordered : uint8_t { All, LatestPerTimeline };
  void access(uint64_t lo, uint64_t hi, trace::AccessMode mode, const OpStamp& op, const VectorClock& now,
              std::vector<Conflict>& out, std::vector<Conflict>* ordered = nullptr, Phantom phantom = Phantom::No,
              Ordered scope = Ordered::All);
  // Checks [lo, hi) like a write by `op` (freeing memory), then forgets its history.
  void release(uint64_t lo, uint64_t hi, const OpStamp& op, const VectorClock& now, std::vector<Conflict>& out,
               std::vector<Conflict>* ordered = nullptr);
  // Keep every read since the last write instead of forgetting those ordered before a later
  // read (AnalysisOptions::keep_all_readers): more to check at the next write, but which pairs
  // are checked no longer depends on the order.
  void keep_all_readers(bool keep) { keep_all_readers_ = keep; }
  // Phantoms may occur (the pass's checks): accesses take access_for_pass and are indexed.
  void expect_phantoms(bool expect) { phantoms_ = expect; }
  // Phantoms walk every cell for what it keeps instead of asking the indexes (the reference the
  // indexes are tested against).
  void walk_for_phantoms(bool walk) { walk_for_phantoms_ = walk; }
  // Forgets the history of [lo, hi) (fresh allocation).
  void forget(uint64_t lo, uint64_t hi) { cells_.erase(lo, hi); }

  const IntervalMap<ShadowCell>& cells() const { return cells_; }
  void prefetch() const { cells_.prefetch(); }

 private:
  IntervalMap<ShadowCell> cells_;
  // The pass's writes, reads and phantoms by timeline (only with phantoms_): what a phantom over
  // all memory meets of them.
  AccessIndex writes_, reads_;
  PhantomIndex phantom_index_;
  void access_for_pass(uint64_t lo, uint64_t hi, trace::AccessMode mode, const OpStamp& op, const VectorClock& now,
                       std::vector<Conflict>& out, std::vector<Conflict>* ordered, Phantom phantom, Ordered scope);
  bool spans_every_cell(uint64_t lo, uint64_t hi) const;
  void meet_indexed_phantoms(const OpStamp& op, const VectorClock& now, PhantomIndex::List list);
  void meet_indexed(AccessIndex& index, trace::AccessMode role, const OpStamp& op, const VectorClock& now);
  bool phantom_held(const OpStamp& p, PhantomIndex::List list, uint64_t lo, uint64_t hi, HeldSpan& span) const;

  // The pairs of the access in progress: into `out`, and `ordered` when it is asked for.
  PairNotes out_notes_, ordered_notes_;
  PairNotes* start_notes(std::vector<Conflict>& out, std::vector<Conflict>* ordered);

  bool keep_all_readers_ = false;
  bool phantoms_ = false;
  bool walk_for_phantoms_ = false;
};

}  // namespace streamhaz::analysis
