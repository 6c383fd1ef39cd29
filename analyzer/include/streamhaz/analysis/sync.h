// Over-synchronisation findings, the minimal synchronisation and race manifestation: the
// passes that need the whole run in memory and the replay (docs/sync-and-replay.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/finding.h"
#include "streamhaz/analysis/replay.h"
#include "streamhaz/analysis/sync_verdict.h"

namespace streamhaz::analysis {

// How the pass finds what each site protects (docs/sync-and-replay.md, "How verdicts are
// computed"): by witness sets, one check of the run for all sites (linear in the run); or by
// removal, one check per site (fewer by group testing), the reference the first is tested against.
enum class SyncAlgorithm : uint8_t { Witness, Removal };
const char* to_string(SyncAlgorithm a);  // "witness", "removal"

struct SyncOptions {
  // The pass holds the run in memory and checks it a few times over (once per variant, or once
  // per site and variant by removal), so it reads a window: the training steps after the
  // warm-up, as many as fit at most this many records per rank...
  uint64_t window_records = 50000;
  // ...and at most this many synchronisations per rank (at least one step; a trace without
  // steps: its start). Outside the window nothing is judged; the work before and after it counts
  // as work that may need anything (no unsound verdict).
  uint64_t window_syncs = 200;
  double min_cost = 0.01;            // a finding must cost this share of the step time
  // Training steps (NVTX range replay.step_range) judged start after this many: the first
  // steps compile, allocate and warm caches (docs/sync-and-replay.md, "What is judged").
  int warmup_steps = 1;
  SyncAlgorithm algorithm = SyncAlgorithm::Witness;
  ReplayOptions replay;
};

struct SyncReport {
  std::vector<Finding> findings;       // kind OverSync
  std::vector<SyncVerdict> verdicts;   // every site, for notes and JSON
  std::vector<std::string> notes;      // one line per site that is not a finding
  std::vector<std::string> warnings;
  std::vector<std::string> advice;     // the minimal synchronisation, for people
  WhatIf minimal;                      // the same, as a what-if
  int64_t step_ns = 0;                 // measured over the judged steps
  std::string scope;                   // what was judged: "steps 2 to 5 of 5 (NVTX range 'step', ...)"
  bool ran = false;                    // false: no GPU times or nothing to analyse
};

// Decides for every wait and host synchronisation whether it orders a conflicting pair that
// nothing else orders, costs each with the replay and computes the minimal synchronisation.
// With `races`, adds each race's manifestation (the slowdown that makes it overlap) to its detail.
SyncReport analyze_sync(const std::vector<std::string>& trace_files, const AnalysisOptions& options,
                        const SyncOptions& sync_options, std::vector<Finding>* races = nullptr);

// The minimal synchronisation of a run held in memory (used by `replay --what-if minimal-sync`).
WhatIf minimal_sync(const std::vector<RankRecords>& run, std::vector<std::string>* advice = nullptr);

}  // namespace streamhaz::analysis
