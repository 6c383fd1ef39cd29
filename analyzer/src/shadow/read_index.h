// The reads shadow memory keeps, by timeline, for the over-synchronisation pass's phantoms: a
// phantom accesses all memory, so walking every cell to test every reader against its clock costs
// the whole of shadow memory per phantom. Per timeline, the reads come in clock order; a clock
// leaves unordered exactly those after its value for the timeline, and of those it covers only the
// newest still kept in shadow memory can matter to the pass (ShadowMemory::access says why). So a
// phantom asks here, per timeline, for those few reads and looks up only their own bytes.
//
// The index keeps every read ever added until a lookup finds it gone from shadow memory (a later
// write replaced it, or its memory was freed): nothing brings a read back once it is gone, so it is
// dropped then, for good.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/vector_clock.h"
#include "model/op_stamp.h"

namespace streamhaz::analysis {

// Where shadow memory still holds a read: the span from its lowest to its highest byte held.
struct HeldSpan {
  uint64_t lo = UINT64_MAX, hi = 0;
  bool empty() const { return lo >= hi; }
  void add(uint64_t a, uint64_t b) {
    lo = a < lo ? a : lo;
    hi = b > hi ? b : hi;
  }
};

class ReadIndex {
 public:
  // A read of [lo, hi) by `op`; one operation's ranges come one after another.
  void add(const OpStamp& op, uint64_t lo, uint64_t hi);

  // The reads a check with clock `now` has to meet, timeline by timeline, with where shadow memory
  // still holds each (`held(op, lo, hi, span)` adds to `span` the held bytes of [lo, hi)):
  //  - every read `now` does not cover goes to `unordered(op, span)`;
  //  - with `covered_too`, the covered reads go to `covered(op, span)` newest first, until the
  //    first one that is no graph operation's. Reads of graph operations stay apart and are all
  //    met (a graph launched twice checks one pair twice), as they would be in a walk.
  // A read held nowhere is dropped and goes to neither.
  template <class Held, class Unordered, class Covered>
  void meet(const VectorClock& now, bool covered_too, Held&& held, Unordered&& unordered, Covered&& covered);

  size_t size() const;  // reads kept (ranges counted one by one)

 private:
  struct Read {
    OpStamp op;  // !valid(): dropped (the epoch stays, for the order)
    uint64_t lo, hi;
  };
  // One timeline's reads in clock order, an operation's ranges next to each other.
  struct Timeline {
    TimelineId id = 0;
    std::vector<Read> plain;
    std::vector<Read> in_graph;
    size_t dropped = 0;  // reads of `plain` and `in_graph` marked dropped, not yet removed
  };
  std::vector<Timeline> timelines_;  // a rank's few timelines: looked up one by one

  Timeline& timeline(TimelineId id);
  static void compact(Timeline& t);

  // The ranges of the operation whose reads start at `first`: one past its last.
  static size_t end_of_op(const std::vector<Read>& reads, size_t first);
  // Where the operation of reads [first, end) is held; marks them dropped if nowhere.
  template <class Held>
  static HeldSpan held_span(Timeline& t, std::vector<Read>& reads, size_t first, size_t end, Held& held);
};

template <class Held>
HeldSpan ReadIndex::held_span(Timeline& t, std::vector<Read>& reads, size_t first, size_t end, Held& held) {
  HeldSpan span;
  for (size_t i = first; i < end; ++i) held(reads[i].op, reads[i].lo, reads[i].hi, span);
  if (span.empty()) {
    for (size_t i = first; i < end; ++i) reads[i].op.seq = 0;
    t.dropped += end - first;
  }
  return span;
}

template <class Held, class Unordered, class Covered>
void ReadIndex::meet(const VectorClock& now, bool covered_too, Held&& held, Unordered&& unordered,
                     Covered&& covered) {
  for (Timeline& t : timelines_) {
    const ClockValue known = now.get(t.id);
    // Reads of graph operations: all met, as a walk meets them.
    for (size_t i = 0; i < t.in_graph.size();) {
      const size_t end = end_of_op(t.in_graph, i);
      const OpStamp op = t.in_graph[i].op;
      if (op.valid() && (covered_too || op.epoch.clock > known)) {
        const HeldSpan span = held_span(t, t.in_graph, i, end, held);
        if (!span.empty()) op.epoch.clock > known ? unordered(op, span) : covered(op, span);
      }
      i = end;
    }
    // Other reads: the unordered ones after `known`, then the covered ones newest first.
    std::vector<Read>& reads = t.plain;
    size_t split = reads.size();  // the first read after `known`
    while (split > 0 && reads[split - 1].op.epoch.clock > known) --split;
    for (size_t i = split; i < reads.size();) {
      const size_t end = end_of_op(reads, i);
      if (reads[i].op.valid()) {
        const OpStamp op = reads[i].op;
        if (const HeldSpan span = held_span(t, reads, i, end, held); !span.empty()) unordered(op, span);
      }
      i = end;
    }
    for (size_t end = split; covered_too && end > 0;) {
      size_t first = end - 1;
      while (first > 0 && reads[first - 1].op == reads[end - 1].op) --first;
      const OpStamp op = reads[first].op;
      if (op.valid()) {
        if (const HeldSpan span = held_span(t, reads, first, end, held); !span.empty()) {
          covered(op, span);
          break;
        }
      }
      end = first;
    }
    if (2 * t.dropped > t.plain.size() + t.in_graph.size()) compact(t);
  }
}

}  // namespace streamhaz::analysis
