// What the analysis reports. Report writers (text, JSON, SARIF) read only these types.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// One operation named by a finding.
struct OpRef {
  int rank = 0;
  uint64_t seq = 0;           // per-process API sequence number
  std::string kind;           // "kernel", "memcpy DtoD", "memset", "ncclAllReduce", "host_func", "free"...
  std::string name;           // kernel name (as traced), or the API call for other kinds
  trace::StreamId stream = 0;  // meaningless when on_host
  bool on_host = false;       // done by the host, on no stream (cudaFree): not stream 0, the legacy stream
  std::string stream_name;    // from NVTX / annotations, or "stream <id>"
  std::string nvtx;           // NVTX range path at issue, "" when none
  trace::AccessMode role = trace::AccessMode::Read;  // what this op did to the bytes
  uint64_t start_ns = 0, end_ns = 0;  // GPU interval, 0 when not measured
};

// The bytes two operations conflict on, located in the allocation that holds them.
struct BufferRef {
  std::string name;           // program-given name ("ipg_buffer[0]"), or "allocation 0x..."
  uint64_t alloc_base = 0;    // 0 when the bytes lie in no traced allocation
  uint64_t alloc_bytes = 0;
  uint64_t offset = 0;        // of the conflicting range within the allocation
  uint64_t bytes = 0;
};

// PossibleRace: one side is known only from the pointer tier (a launch argument pointing into
// the buffer, extent and direction unknown); gated apart from races (check --fail-on possible).
enum class FindingKind { Race, OverSync, PossibleRace };

struct Finding {
  FindingKind kind = FindingKind::Race;
  // Stable across runs and steps (no addresses or seqs): what suppressions and dedup key on.
  std::string key;
  std::string title;          // one line: "write-after-read race on ipg_buffer[0]"
  OpRef first;                // issued first
  OpRef second;               // issued later, not ordered after `first`
  BufferRef buffer;
  // The wait that would order them, e.g. "cudaStreamWaitEvent(compute stream, <event recorded on
  // reduction stream after ncclAllReduce>) before the memcpy".
  std::string missing_order;
  uint64_t occurrences = 1;   // folded repeats (steps, buckets, ranks)
  std::vector<int> ranks;     // ranks it was seen on
  trace::FootprintTier tier = trace::FootprintTier::Api;
  bool exact = true;          // byte ranges exact (false: approximated extents)
  std::string detail;         // free text for humans (over-sync: stall time, predicted gain)
};

struct TraceSummary {
  std::string path;
  int rank = -1;
  uint64_t records = 0;
  uint64_t operations = 0;
  bool truncated = false;
  std::string truncation;
  uint64_t records_lost = 0;     // at least this many records of a truncated trace are lost
  uint64_t dropped_records = 0;  // records the tracer could not make (it says so in the trace)
};

struct AnalysisResult {
  std::vector<Finding> findings;
  std::vector<TraceSummary> traces;
  std::vector<std::string> warnings;  // for humans: truncated inputs, unmatched collectives...
  uint64_t operations_checked = 0;
  uint64_t operations_without_footprint = 0;  // kernels contributing ordering only
  // Kernels by the weakest footprint tier they were checked with (indexed by FootprintTier;
  // pointer: pointer-tier accesses only). Memcpy, memset and NCCL operations are API-tier.
  std::array<uint64_t, trace::kFootprintTierCount> kernels_by_tier{};
  // Launches of a kernel kernels.json summarises that it could not be applied to: the trace has
  // no argument bytes, or they do not fit the summary's layout.
  uint64_t kernels_summary_unused = 0;
  // Over-synchronisation pass: verdicts that are not findings, and the minimal synchronisation
  // as advice (docs/sync-and-replay.md). Empty when the pass did not run.
  std::vector<std::string> sync_notes;
  std::vector<std::string> minimal_sync;
};

}  // namespace streamhaz::analysis
