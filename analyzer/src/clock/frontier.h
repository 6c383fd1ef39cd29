// Frontiers: what a collective's receivers learn about each rank's own timelines. A race is
// between two operations of one rank, so a rank's clocks hold only its own timelines; order
// that leaves a rank through a collective and comes back through another is carried by
// frontiers instead of by every rank's components. A frontier maps a rank to the clock (over
// that rank's timelines) of the latest of its collective starts it covers, so a receiver
// reads its own entry in O(log ranks) and never touches the others'. Frontiers are immutable
// and shared: every receiver of an all-reduce holds the same one.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "clock/vector_clock.h"

namespace streamhaz::analysis {

class Frontier {
 public:
  uint64_t id() const { return id_; }
  // This rank's timelines as this frontier knows them (size 0: nothing of that rank).
  std::pair<const ClockValue*, size_t> of(uint32_t rank) const;
  size_t ranks() const { return entries_.size(); }
  // Was frontier `id` merged into this one (so that this one covers it)?
  bool covers(uint64_t id) const;

 private:
  friend class FrontierBuilder;
  struct Entry {
    uint32_t rank, offset, size;
  };
  uint64_t id_ = 0;
  std::vector<Entry> entries_;  // by rank
  std::vector<ClockValue> values_;
  std::vector<uint64_t> inputs_;  // sorted ids of the frontiers merged in (direct inputs only)
};
using FrontierRef = std::shared_ptr<const Frontier>;

// Drops frontiers that another one of the set covers, and duplicates; keeps the rest in order.
void drop_covered(std::vector<FrontierRef>& set);

// Builds frontiers by pointwise maximum; keeps its scratch between builds (one per matcher).
class FrontierBuilder {
 public:
  void start(size_t ranks);
  void add(uint32_t rank, const VectorClock& clock);
  void add(const FrontierRef& f);  // also noted as an input
  FrontierRef build();

 private:
  void add(uint32_t rank, const ClockValue* v, size_t n);
  std::vector<std::vector<ClockValue>> acc_;
  std::vector<uint32_t> touched_;
  std::vector<uint64_t> inputs_;
  uint64_t next_id_ = 1;
};

}  // namespace streamhaz::analysis
