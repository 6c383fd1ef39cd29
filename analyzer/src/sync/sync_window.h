// The part of a run the over-synchronisation pass judges (docs/sync-and-replay.md, "What is
// judged"): the training steps after the warm-up, as many as the record and synchronisation
// budgets allow. Steps are the instances of the step range, or, in a trace without it, the
// periods of its repeating collectives and host synchronisations (pattern_steps.h). On a real job the trace's first records are process-group set-up, model
// broadcast and engine initialisation; a window over them judged no training step.
//
// The records before the judged steps are left out but for what keeps the rest meaningful
// (streams, events and their records and waits, allocations, names, host synchronisations).
// The work they leave out stands, in the pass's touch-all variants, as one kernel that reads and
// writes all memory at the start of each stream that had some (a start fence): a synchronisation
// that ordered such work against the judged steps is never called redundant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "sync/trace_shape.h"

namespace streamhaz::analysis {

// A kernel standing for a stream's left-out work: inserted at `index` of the rank's records.
struct StartFence {
  size_t index = 0;
  trace::StreamId stream = 0;
  uint64_t seq = 0;  // the seq of the stream's first left-out operation (unique, below the window)
};

struct JudgedWindow {
  bool from_steps = false;  // false: the run from its start (no steps found)
  size_t pattern_period = 0;  // steps from the repeating pattern of this many calls (pattern_steps.h)
  bool second_read = false;   // ...shaped by reading the trace again (step_segments.h)
  int first_step = 0, last_step = 0, steps = 0;  // 1-based, of `steps` in the trace
  uint64_t first_seq = 0;     // syncs before it are not judged
  uint64_t first_record = 0;  // operations before it (by record index) are left out
  uint64_t left_out_operations = 0;
  bool cut = false;  // operations of the trace after the window are left out
  std::vector<StartFence> fences;
};

struct WindowBudget {
  uint64_t records = 50000;
  uint64_t syncs = 200;
  int warmup_steps = 1;
  std::string step_range = "step";
  // Steps from the repeating pattern are shaped by a second read even where the first read's sums
  // serve (step_segments.h): the reference the tests hold those sums to.
  bool reread_pattern_steps = false;
  // GPU times written after the window are read from the trace even where the first read kept
  // them (TraceShape::timings): the reference the tests hold the kept ones to.
  bool read_late_timings = false;
  // Threads reading traces at once (AnalysisOptions::jobs, 0: every core).
  unsigned jobs = 1;
};

// Loads each trace's judged window. `windows`: one per trace, in the files' order. `shapes`: the
// traces' shapes from a read already made (shape_reader.h), one per file; without them each trace
// is read once more for its shape.
std::vector<RankRecords> load_judged_windows(const std::vector<std::string>& files, const WindowBudget& budget,
                                             std::vector<JudgedWindow>& windows,
                                             const std::vector<TraceShape>* shapes = nullptr);

// Whether some trace goes on past its window (its end needs end fences, pair_check.h).
bool any_window_cut(const std::vector<JudgedWindow>& windows);

// "steps 2 to 4 of 10 (NVTX range 'step', step 1 taken as warm-up)", over the ranks' windows.
std::string describe_windows(const std::vector<JudgedWindow>& windows, const WindowBudget& budget);

}  // namespace streamhaz::analysis
