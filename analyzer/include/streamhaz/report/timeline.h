// The timeline of a run: every operation of every rank's streams with its GPU interval, the
// event waits between streams and the NCCL calls that match across ranks. The analyzer's
// streaming engine keeps nothing per operation, so the HTML report and the Perfetto export
// read the traces again into this model.
//
// Traces recorded with sampled GPU times (header `gpu_times`) time only some operations; the
// others are placed by API order between their timed neighbours and marked `timed == false`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "streamhaz/analysis/finding.h"

namespace streamhaz::report {

enum class OpClass : uint8_t { Kernel, Memcpy, Memset, Nccl, HostFunc, GraphLaunch };

struct TimelineOp {
  uint64_t seq = 0;
  uint64_t start_ns = 0, end_ns = 0;  // measured, or placed by order when !timed
  uint32_t stream = 0;                // index into RankTimeline::streams
  uint32_t kind = 0;                  // index into RankTimeline::names: "kernel", "memcpy DtoD"...
  uint32_t name = 0;                  // names: kernel name, or the API call
  uint32_t nvtx = 0;                  // names: NVTX range path at issue ("" when none)
  OpClass cls = OpClass::Kernel;
  bool timed = false;                 // false: no GPU time recorded, placed by API order
};

struct TimelineStream {
  uint32_t id = 0;                    // the trace's stream id
  std::string name;                   // "compute stream", or "stream <id>"
  uint32_t device = 0;
};

// cudaStreamWaitEvent(to's stream, e) where e was last recorded after `from` on another stream.
struct WaitArrow {
  uint32_t from = 0, to = 0;          // indices into RankTimeline::ops
  uint64_t wait_seq = 0;
};

// One rank's part of an NCCL call; calls with equal (comm, comm_seq) match across ranks.
struct CollectiveCall {
  uint64_t comm = 0, comm_seq = 0;
  uint32_t op = 0;                    // index into RankTimeline::ops
};

struct TimeWindow {
  uint64_t start_ns = 0, end_ns = 0;
};

struct RankTimeline {
  int rank = 0;                       // as the analysis numbered it
  std::string path;
  std::string gpu_times;              // header "gpu_times" ("all" when absent: older traces timed all)
  std::vector<std::string> names;     // names[0] == ""
  std::vector<TimelineStream> streams;
  std::vector<TimelineOp> ops;        // in issue (seq) order; a graph relaunch repeats a seq
  std::vector<WaitArrow> waits;
  std::vector<CollectiveCall> collectives;
  std::vector<TimeWindow> timed_windows;  // where GPU times were collected (only when some ops are untimed)
  uint64_t untimed_ops = 0;
  bool order_only = false;            // no GPU time at all: the axis is API order (1 µs per call)
};

struct Timeline {
  std::vector<RankTimeline> ranks;    // by rank
  uint64_t total_ops() const;
  uint64_t untimed_ops() const;
  // Index of the operation (rank, seq) in ranks[ri].ops, or -1.
  int64_t find_op(size_t rank_index, uint64_t seq) const;
  int64_t rank_index(int rank) const;  // -1 when absent
};

// Reads every trace the analysis read (its TraceSummary gives path and rank). Throws
// trace::TraceError for unreadable input.
Timeline load_timeline(const std::vector<analysis::TraceSummary>& traces);

}  // namespace streamhaz::report
