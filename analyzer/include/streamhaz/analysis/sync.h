// Over-synchronisation findings, the minimal synchronisation and race manifestation: the
// passes that need the whole run in memory and the replay (docs/sync-and-replay.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/finding.h"
#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {

struct SyncOptions {
  // The pass holds the run in memory and re-checks it once per synchronisation (fewer when
  // many are redundant), so it reads a window: the training steps after the warm-up, as many as
  // fit at most this many records per rank...
  uint64_t window_records = 50000;
  // ...and at most this many synchronisations per rank (at least one step; a trace without
  // steps: its start). Outside the window nothing is judged; the work before and after it counts
  // as work that may need anything (no unsound verdict).
  uint64_t window_syncs = 200;
  double min_cost = 0.01;            // a finding must cost this share of the step time
  // Training steps (NVTX range replay.step_range) judged start after this many: the first
  // steps compile, allocate and warm caches (docs/sync-and-replay.md, "What is judged").
  int warmup_steps = 1;
  ReplayOptions replay;
};

// What a synchronisation does (docs/sync-and-replay.md, "Verdicts"): orders no conflicting pair
// that nothing else orders; orders some; may order kernels without a footprint (or work past the
// judged window); is the host's wait for a copy to host memory it may read.
enum class SyncJudgement : uint8_t { Redundant, Protects, MayProtect, HostRead };
const char* to_string(SyncJudgement j);  // "redundant", "protects", "may-protect", "host-read"

// One synchronisation site's verdict (instances folded by key and class).
struct SyncVerdict {
  std::string key;
  std::string what;        // "cudaStreamWaitEvent(compute stream, event recorded on reduction stream)"
  std::string where;       // "before memcpy DtoD (NVTX ?/step/backward)"
  SyncJudgement verdict = SyncJudgement::Redundant;
  uint64_t instances = 0;
  uint64_t pairs = 0;              // conflicting pairs only it orders (protects)
  uint64_t unfootprinted = 0;      // kernels without footprint it may protect (may-protect)
  int64_t stall_ns_per_step = 0;   // measured, slowest rank
  int64_t step_ns = 0;             // measured step time
  int64_t step_without_ns = 0;     // replay without this site (or with it replaced by minimal waits)
  bool replaced = false;           // step_without_ns is for the minimal-wait replacement
  bool finding = false;
};

struct SyncReport {
  std::vector<Finding> findings;       // kind OverSync
  std::vector<SyncVerdict> verdicts;   // every site, for notes and JSON
  std::vector<std::string> notes;      // one line per site that is not a finding
  std::vector<std::string> warnings;
  std::vector<std::string> advice;     // the minimal synchronisation, for people
  WhatIf minimal;                      // the same, as a what-if
  int64_t step_ns = 0, minimal_step_ns = 0;
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
