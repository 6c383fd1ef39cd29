// What the over-synchronisation pass's first read learns of one trace (sync_window.h): per step,
// where it starts and how much it holds.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

inline constexpr uint64_t kNoSeq = std::numeric_limits<uint64_t>::max();

struct StepShape {
  uint64_t first_seq = kNoSeq, last_seq = 0;
  uint64_t first_record = 0, last_record = 0;  // indices of the step's first and last call among the trace's records
  uint64_t records = 0, syncs = 0;
  uint64_t timed = 0;        // operations with GPU times
  uint64_t timed_after = 0;  // ...issued after it, before the next step (between steps)
};

// A GPU time the first read kept for the judged window, and its record index: CUPTI delivers
// times late (at the end of the run, when a trace's timed steps are few), so the window's load
// takes the ones written after its last record from here instead of reading on.
struct KeptTiming {
  uint64_t index = 0;
  trace::Timing timing;
};

// Which GPU times the first read keeps: those of the steps a judged window may hold (the first
// timed step after the warm-up, and the steps after it within the window's record budget).
struct TimingKeep {
  int warmup_steps = 1;
  uint64_t window_records = 50000;
};

struct TraceShape {
  std::vector<StepShape> steps;
  // Every GPU time of an operation of the steps TimingKeep names, in trace order, when
  // `timings_kept` (a trace with a step range, more steps than the warm-up); else none.
  std::vector<KeptTiming> timings;
  bool timings_kept = false;
  std::vector<uint64_t> capture_records;  // record indices of capture begins
  uint64_t records = 0;
  bool range_edges = false;
  size_t pattern_period = 0;  // steps from the repeating pattern of this many calls (no range)
  bool second_read = false;   // ...shaped by a second read
};

// GPU times come late: the step an operation belongs to is the one whose seqs enclose it, or the
// one before it for an operation issued between steps (StepShape::timed_after). Counts it there
// and returns that step's index, -1 for an operation before the first step.
int count_timed(std::vector<StepShape>& steps, uint64_t op_seq);

// What the shaping reads of a record: its call's seq (0 for a record that is no call) and
// whether it is a synchronisation (replay.h's sync_kind).
struct RecordFacts {
  uint64_t seq = 0;
  bool sync = false;
};
RecordFacts facts_of(const trace::Record& r);

// Adds record `index` to the step it belongs to: `step` for a call that opens or continues one,
// -1 for a record of the step in progress (or of none). Steps grow in order; `current` is the
// step in progress.
void add_to_step(TraceShape& t, RecordFacts f, uint64_t index, int step, int& current);

}  // namespace streamhaz::analysis
