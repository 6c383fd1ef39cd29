// The accesses of one kind (the readers, or the writers) shadow memory keeps, by timeline, for the
// over-synchronisation pass's phantoms: a phantom accesses all memory, so walking every cell to
// test its writer and every reader against the phantom's clock costs the whole of shadow memory
// per phantom. Per timeline, the accesses come in clock order; a clock leaves unordered exactly
// those after its value for the timeline, and of those it covers only the newest still kept in
// shadow memory can matter to the pass (ShadowMemory::access says why). So a phantom asks here,
// per timeline, for those few accesses and looks up only their own bytes.
//
// The index keeps every access added until a lookup finds it gone from shadow memory (a later
// write replaced it, or its memory was freed): nothing brings an access back once it is gone, so it
// is dropped then, for good.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/vector_clock.h"
#include "model/op_stamp.h"

namespace streamhaz::analysis {

// Where shadow memory still holds an access: the span from its lowest to its highest byte held.
struct HeldSpan {
  uint64_t lo = UINT64_MAX, hi = 0;
  bool empty() const { return lo >= hi; }
  void add(uint64_t a, uint64_t b) {
    lo = a < lo ? a : lo;
    hi = b > hi ? b : hi;
  }
};

class AccessIndex {
 public:
  // An access of [lo, hi) by `op`; one operation's ranges come one after another.
  void add(const OpStamp& op, uint64_t lo, uint64_t hi);

  // The accesses a check with clock `now` has to meet, timeline by timeline, with where shadow
  // memory still holds each (`held(op, lo, hi, span)` adds to `span` the held bytes of [lo, hi)):
  //  - every access `now` does not cover goes to `unordered(op, span)`;
  //  - with `covered_too`, the covered ones go to `covered(op, span)` newest first, until the
  //    first one that is no graph operation's. Accesses of graph operations stay apart and are all
  //    met (a graph launched twice checks one pair twice), as they would be in a walk.
  // An access held nowhere is dropped and goes to neither.
  template <class Held, class Unordered, class Covered>
  void meet(const VectorClock& now, bool covered_too, Held&& held, Unordered&& unordered, Covered&& covered);

  size_t size() const;  // accesses kept (ranges counted one by one)

 private:
  struct Access {
    OpStamp op;  // !valid(): dropped (the epoch stays, for the order)
    uint64_t lo, hi;
  };
  // One timeline's accesses in clock order, an operation's ranges next to each other.
  struct Timeline {
    TimelineId id = 0;
    std::vector<Access> plain;
    std::vector<Access> in_graph;
    size_t dropped = 0;  // accesses of `plain` and `in_graph` marked dropped, not yet removed
  };
  std::vector<Timeline> timelines_;  // a rank's few timelines: looked up one by one

  Timeline& timeline(TimelineId id);
  static void compact(Timeline& t);

  // The ranges of the operation whose accesses start at `first`: one past its last.
  static size_t end_of_op(const std::vector<Access>& list, size_t first);
  // Where the operation of accesses [first, end) is held; marks them dropped if nowhere.
  template <class Held>
  static HeldSpan held_span(Timeline& t, std::vector<Access>& list, size_t first, size_t end, Held& held);
};

template <class Held>
HeldSpan AccessIndex::held_span(Timeline& t, std::vector<Access>& list, size_t first, size_t end, Held& held) {
  HeldSpan span;
  for (size_t i = first; i < end; ++i) held(list[i].op, list[i].lo, list[i].hi, span);
  if (span.empty()) {
    for (size_t i = first; i < end; ++i) list[i].op.seq = 0;
    t.dropped += end - first;
  }
  return span;
}

template <class Held, class Unordered, class Covered>
void AccessIndex::meet(const VectorClock& now, bool covered_too, Held&& held, Unordered&& unordered,
                       Covered&& covered) {
  for (Timeline& t : timelines_) {
    const ClockValue known = now.get(t.id);
    // Accesses of graph operations: all met, as a walk meets them.
    for (size_t i = 0; i < t.in_graph.size();) {
      const size_t end = end_of_op(t.in_graph, i);
      const OpStamp op = t.in_graph[i].op;
      if (op.valid() && (covered_too || op.epoch.clock > known)) {
        const HeldSpan span = held_span(t, t.in_graph, i, end, held);
        if (!span.empty()) op.epoch.clock > known ? unordered(op, span) : covered(op, span);
      }
      i = end;
    }
    // Other accesses: the unordered ones after `known`, then the covered ones newest first.
    std::vector<Access>& list = t.plain;
    size_t split = list.size();  // the first access after `known`
    while (split > 0 && list[split - 1].op.epoch.clock > known) --split;
    for (size_t i = split; i < list.size();) {
      const size_t end = end_of_op(list, i);
      if (list[i].op.valid()) {
        const OpStamp op = list[i].op;
        if (const HeldSpan span = held_span(t, list, i, end, held); !span.empty()) unordered(op, span);
      }
      i = end;
    }
    for (size_t end = split; covered_too && end > 0;) {
      size_t first = end - 1;
      while (first > 0 && list[first - 1].op == list[end - 1].op) --first;
      const OpStamp op = list[first].op;
      if (op.valid()) {
        if (const HeldSpan span = held_span(t, list, first, end, held); !span.empty()) {
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
