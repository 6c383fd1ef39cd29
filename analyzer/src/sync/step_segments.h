// The steps of a trace without a step range come from the repeating pattern of its collectives
// and host synchronisations (pattern_steps.h), known only once the whole trace was read. Each
// step starts at such a call or right after it. The first read therefore sums the records
// between those places (segments), as add_to_step would sum them into a step; the pattern's
// steps are then shaped from the sums, without reading the trace a second time.
//
// Exact where the trace's calls come in seq order (a GPU time is then counted with the segment
// of its operation when it arrives); where they do not, `shape` declines and the caller reads
// the trace again.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "sync/trace_shape.h"

namespace streamhaz::analysis {

class StepSegments {
 public:
  StepSegments() = default;
  // Moves keep the segments where they are (and the pointers to them right); a copy would not.
  StepSegments(StepSegments&&) = default;
  StepSegments& operator=(StepSegments&&) = default;
  StepSegments(const StepSegments&) = delete;
  StepSegments& operator=(const StepSegments&) = delete;

  // Record `index` (stack records not counted); `boundary`: a step may start here.
  void add(RecordFacts f, uint64_t index, bool boundary);
  // add() of a record that is no call and no synchronisation.
  void add_plain(uint64_t index, bool boundary) {
    if (boundary || !last_) return add(RecordFacts{}, index, boundary);
    Segment& g = *last_;
    if (index - g.first_record > kMaxSpan) in_order_ = false;  // counts would wrap: read again
    ++(g.has_call ? g.records : g.lead_records);
  }
  // A GPU time of operation `op_seq` (read after its operation).
  void add_timing(uint64_t op_seq);
  // The steps starting at `starts` (record indices), none from `end` on, into t.steps. False
  // (t untouched) where the sums cannot say: calls out of seq order, or a start that is no
  // segment's.
  bool shape(const std::vector<uint64_t>& starts, uint64_t end, TraceShape& t) const;

 private:
  // 56 bytes (a trace of many ranks holds millions): counts and record offsets within a segment
  // in 32 bits. A segment spanning more records than that declines the sums (`in_order_`).
  static constexpr uint64_t kMaxSpan = std::numeric_limits<uint32_t>::max();
  struct Segment {
    uint64_t first_record = 0;
    uint64_t first_seq = kNoSeq, last_seq = 0;
    uint32_t first_call = 0, last_call = 0;    // record indices, from first_record
    uint32_t lead_records = 0, lead_syncs = 0;  // before its first call: the step in progress's
    uint32_t records = 0, syncs = 0;            // from its first call on
    uint32_t timed = 0;                         // GPU times of its operations
    bool has_call = false;
  };
  // A deque: a vector's growth would copy, and fault in, twice the final size, and a trace of
  // many ranks holds millions of segments (one per collective or host synchronisation).
  std::deque<Segment> segments_;
  Segment* last_ = nullptr;           // segments_.back() (a deque's growth leaves it in place)
  std::vector<Segment*> with_calls_;  // the segments that hold calls, in order
  uint64_t last_seq_ = 0;           // the highest call seq so far
  size_t timed_hint_ = 0;           // the with_calls_ index the last GPU time fell in
  bool in_order_ = true;            // calls in seq order, every GPU time's operation one of them
};

}  // namespace streamhaz::analysis
