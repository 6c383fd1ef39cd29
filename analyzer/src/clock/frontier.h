// Frontiers: what a collective's receivers learn about each rank's own timelines. A race is
// between two operations of one rank, so a rank's clocks hold only its own timelines; order
// that leaves a rank through a collective and comes back through another is carried by
// frontiers instead of by every rank's components. A frontier maps a rank to the clock (over
// that rank's timelines) of the latest of its collective starts it covers, so a receiver
// reads its own entry in O(1) when the frontier spans ranks 0..n-1 (an all-reduce over every
// rank) and O(log ranks) otherwise, and never touches the others'. Frontiers are immutable
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
  size_t ranks() const { return ranks_; }
  // Was frontier `id` merged into this one (so that this one covers it)?
  bool covers(uint64_t id) const;

 private:
  friend class FrontierBuilder;
  // One allocation of 32-bit words per frontier (it is made once per collective):
  // [rank of each entry][ranks_ + 1 offsets into the values][values][inputs as hi, lo pairs].
  const uint32_t* rank_of() const { return words_.get(); }
  const uint32_t* offsets() const { return words_.get() + ranks_; }
  const ClockValue* values() const { return words_.get() + 2 * ranks_ + 1; }
  const uint32_t* inputs() const { return values() + offsets()[ranks_]; }
  uint64_t input(size_t i) const { return (uint64_t(inputs()[2 * i]) << 32) | inputs()[2 * i + 1]; }

  uint64_t id_ = 0;
  uint32_t ranks_ = 0;
  uint32_t inputs_ = 0;  // sorted ids of the frontiers merged in (direct inputs only)
  bool dense_ranks_ = false;  // entry i is rank i
  std::unique_ptr<uint32_t[]> words_;
};
using FrontierRef = std::shared_ptr<const Frontier>;

// Drops frontiers that another one of the set covers, and duplicates; keeps the rest in order.
void drop_covered(std::vector<FrontierRef>& set);

// Builds frontiers by pointwise maximum; keeps its scratch between builds (one per matcher).
class FrontierBuilder {
 public:
  void start(size_t ranks);
  void add(uint32_t rank, const ClockValue* v, size_t n);
  void add(uint32_t rank, const VectorClock& clock) { add(rank, clock.data(), clock.size()); }
  void add(const FrontierRef& f);  // also noted as an input
  // Notes frontier `id` as an input without merging it: one whose values another input holds.
  void note_input(uint64_t id) { inputs_.push_back(id); }
  FrontierRef build();

 private:
  std::vector<std::vector<ClockValue>> acc_;
  std::vector<uint32_t> touched_;
  std::vector<uint64_t> inputs_;
  uint64_t next_id_ = 1;
};

}  // namespace streamhaz::analysis
