// The phantoms shadow memory keeps (ShadowCell::phantoms), by timeline, for a phantom over all
// memory: an earlier phantom over all memory sits in every cell, so a walk meets it once per cell.
// Whether a phantom pairs with a later access depends on its epoch alone: the access's clock leaves
// it unordered, or orders it through sites, exactly when its clock value lies above the access's
// VectorClock::sites_floor for its timeline. So per timeline only the phantoms above that floor
// are looked at, newest first, and for each only where shadow memory still holds it.
//
// A phantom is gone from every cell's `latest` once a later phantom of its stream over all memory
// replaced it there (Phantoms::latest), and from every cell once a lookup finds it nowhere
// (written over or freed): nothing brings it back.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/vector_clock.h"
#include "model/op_stamp.h"

namespace streamhaz::analysis {

class PhantomIndex {
 public:
  // Which of a cell's phantom lists a lookup is about (Phantoms::latest or Phantoms::all).
  enum class List : uint8_t { Latest, All };

  // A phantom's access of [lo, hi), as the cells keep it (kOpLastingPhantom for a fence); one
  // phantom's ranges come one after another.
  void add(const OpStamp& kept, uint64_t lo, uint64_t hi);
  // Phantom `by` over all memory is about to be recorded in every cell: its stream's phantoms
  // added so far, fences and its own ranges apart, are gone from every `latest` then.
  void replaced_in_latest(const OpStamp& by);

  // Calls meet(phantom, lo, hi) for each range of every phantom, but `op`, of a timeline above
  // `floor(timeline)` that may still be in `list`; meet returns whether shadow memory holds that
  // range's phantom there. A phantom held by none of its ranges is gone from `list` for good.
  template <class Floor, class Meet>
  void meet(const OpStamp& op, List list, Floor&& floor, Meet&& meet);

  size_t size() const;  // phantom ranges still in some cell's `all`

 private:
  struct Entry {
    OpStamp op;  // !valid(): gone from every cell (the epoch stays, for the order)
    uint64_t lo, hi;
    uint64_t added;          // when (adds counted)
    bool in_latest = true;   // as far as lookups know
  };
  struct Timeline {
    TimelineId id = 0;
    std::vector<Entry> entries;  // in clock order, a phantom's ranges next to each other
    size_t gone = 0;
  };
  std::vector<Timeline> timelines_;
  uint64_t adds_ = 0;
  // Per stream slot, its latest phantom over all memory and the adds before it: the stream's
  // phantoms added by then, fences and that phantom's own ranges apart, are in no `latest`.
  struct Replaced {
    uint32_t stream_slot;
    Epoch by;
    uint64_t adds;
  };
  std::vector<Replaced> replaced_;

  Timeline& timeline(TimelineId id);
  bool in_latest(const Entry& x) const;
};

template <class Floor, class Meet>
void PhantomIndex::meet(const OpStamp& op, List list, Floor&& floor, Meet&& meet) {
  for (Timeline& t : timelines_) {
    const ClockValue above = floor(t.id);
    std::vector<Entry>& e = t.entries;
    for (size_t end = e.size(); end > 0 && e[end - 1].op.epoch.clock > above;) {
      size_t first = end - 1;
      while (first > 0 && e[first - 1].op.epoch == e[end - 1].op.epoch) --first;
      Entry& head = e[first];
      if (head.op.valid() && !(head.op == op) && (list == List::All || in_latest(head))) {
        bool held = false;
        for (size_t i = first; i < end; ++i) held |= meet(e[i].op, e[i].lo, e[i].hi);
        if (!held)
          for (size_t i = first; i < end; ++i) {
            if (list == List::Latest) {
              e[i].in_latest = false;
            } else {
              e[i].op.seq = 0;
              ++t.gone;
            }
          }
      }
      end = first;
    }
    if (2 * t.gone > e.size()) {
      std::erase_if(e, [](const Entry& x) { return !x.op.valid(); });
      t.gone = 0;
    }
  }
}

}  // namespace streamhaz::analysis
