// What the analysis reports. Report writers (text, JSON, SARIF) read only these types.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "streamhaz/analysis/sync_verdict.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// One frame of a call stack. Python frames as the interpreter knew them; native frames by
// module and offset, with file, line and function where offline symbolisation found them.
struct StackFrame {
  trace::FrameKind kind = trace::FrameKind::Python;
  std::string file;      // "" when unknown
  uint32_t line = 0;     // 0 when unknown
  std::string function;  // "" when unknown
  std::string module;    // native frames: path of the loaded object
  uint64_t offset = 0;   // native frames: return address minus the object's load address
  bool operator==(const StackFrame&) const = default;
};
using Stack = std::vector<StackFrame>;  // innermost frame first; empty: the trace has none

// Where a stream came from, for streams without a program-given name. PyTorch creates its
// stream pool lazily, many streams from one call: a creation stack several streams share
// says nothing about this one, so such a stream is placed by its first operation instead.
enum class StreamOriginKind { None, Created, FirstUsed };
struct StreamOrigin {
  StreamOriginKind kind = StreamOriginKind::None;
  Stack stack;
  // FirstUsed for a stream of a pool: the call that created the pool, and how many streams it
  // made (0: not from a pool, or its creation has no stack).
  Stack pool_stack;
  uint32_t pool_streams = 0;
};

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
  Stack stack;                 // where the program issued it (traces with stacks)
  StreamOrigin stream_origin;  // where its stream was created or first used
};

// The bytes two operations conflict on, located in the allocation that holds them.
struct BufferRef {
  std::string name;           // program-given name ("ipg_buffer[0]"), or "allocation 0x..."
  uint64_t alloc_base = 0;    // 0 when the bytes lie in no traced allocation
  uint64_t alloc_bytes = 0;
  uint64_t offset = 0;        // of the conflicting range within the allocation
  uint64_t bytes = 0;
  // The traced allocation holding the bytes (its base may differ from alloc_base when a
  // program-given name covers part of it), and where the program made it.
  uint64_t allocation = 0;         // 0: not looked up or no stack
  uint64_t allocation_bytes = 0;
  Stack alloc_stack;
  // The allocation is a PyTorch caching-allocator segment: it serves many tensors, and its
  // stack is the first request's, not this tensor's.
  bool caching_allocator = false;
  // The tensor the bytes belong to, from the allocator's own history (traces recorded with
  // `--allocator-history on`): the block the allocator handed it, live when the later
  // operation was issued, and where the program allocated it. In a caching-allocator segment
  // without one, `tensor_unknown` says why.
  uint64_t tensor = 0;  // the block's address; 0: unknown
  uint64_t tensor_bytes = 0;
  Stack tensor_stack;
  std::string tensor_unknown;
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
  // Over-synchronisation: the synchronisation call judged (rank, seq; 0 when unknown) and its stack.
  int sync_rank = 0;
  uint64_t sync_seq = 0;
  Stack sync_stack;
};

struct TraceSummary {
  std::string path;
  int rank = -1;
  uint64_t records = 0;
  uint64_t operations = 0;
  bool truncated = false;
  std::string truncation;
  bool unobserved = false;  // truncated because the tracer stopped observing, not cut off
  uint64_t records_lost = 0;     // at least this many records of a truncated trace are lost
  uint64_t dropped_records = 0;  // records the tracer could not make (it says so in the trace)
  // A trace of the exact tier: kernels whose footprint is only their pointer arguments (launches
  // its steady phase ran bare, graph nodes, launches whose instrumentation reported nothing).
  uint64_t exact_tier_pointer_only = 0;
  std::string strings_cut_note;  // names cut to their first 64 KiB (TraceReader), "" for none
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
  std::vector<SyncVerdict> sync_sites;  // every site judged, findings included
  std::string sync_scope;  // what the over-synchronisation pass judged ("steps 2 to 5 of 5 ...")
  std::vector<std::string> minimal_sync;
};

}  // namespace streamhaz::analysis
