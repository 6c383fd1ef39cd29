#include "sample_findings.h"

namespace streamhaz::report::testing {

using analysis::Finding;
using analysis::FindingKind;
using trace::AccessMode;

Finding sample_race() {
  Finding f;
  f.kind = FindingKind::Race;
  f.key = "race:memcpy DtoD@compute stream/ncclAllReduce@reduction stream/ipg_buffer[0]";
  f.title = "write-after-read race on ipg_buffer[0]";
  f.first = {.rank = 0, .seq = 40, .kind = "ncclAllReduce", .name = "ncclAllReduce", .stream = 3,
             .stream_name = "reduction stream", .nvtx = "step/average_tensor", .role = AccessMode::ReadWrite,
             .start_ns = 1000, .end_ns = 9000};
  f.second = {.rank = 0, .seq = 57, .kind = "memcpy DtoD", .name = "cudaMemcpyAsync", .stream = 2,
              .stream_name = "compute stream", .nvtx = "step/backward", .role = AccessMode::Write,
              .start_ns = 5000, .end_ns = 6000};
  f.buffer = {.name = "ipg_buffer[0]", .alloc_base = 0x7f0000000000, .alloc_bytes = 8192, .offset = 256, .bytes = 4096};
  f.missing_order =
      "cudaStreamWaitEvent(compute stream, <event recorded on reduction stream after ncclAllReduce>) before the memcpy";
  f.occurrences = 12;
  f.ranks = {0, 1};
  f.tier = trace::FootprintTier::Api;
  f.exact = true;
  return f;
}

Finding sample_oversync() {
  Finding f;
  f.kind = FindingKind::OverSync;
  f.key = "oversync:cudaStreamWaitEvent@compute stream";
  f.title = "compute stream waits for the whole reduction stream";
  // A kernel name as a trace gives it: templates, quotes, and a stray newline.
  f.first = {.rank = 1, .seq = 70, .kind = "kernel", .name = "void scale<float, \"q\">(float*, int)\nEVIL",
             .stream = 2, .stream_name = "compute stream", .role = AccessMode::Write};
  f.second = {.rank = 1, .seq = 66, .kind = "ncclAllReduce", .name = "ncclAllReduce", .stream = 3,
              .stream_name = "reduction stream", .role = AccessMode::Read};
  f.buffer = {.name = "grad_partition", .alloc_base = 0x7f0000004000, .alloc_bytes = 1024, .offset = 0, .bytes = 1024};
  f.missing_order = "record one event per IPG buffer instead";
  f.occurrences = 3;
  f.ranks = {1};
  f.tier = trace::FootprintTier::Static;
  f.exact = false;
  f.detail = "stalled the compute stream 1.2 ms per step; replay predicts 9.1 ms instead of 10.3 ms";
  return f;
}

ReportInput sample_input() {
  ReportInput in;
  in.analysis.findings = {sample_race(), sample_oversync()};
  Finding hidden = sample_race();
  hidden.key = "race:kernel@side stream/memset@compute stream/scratch";
  hidden.buffer.name = "scratch";
  in.suppressed.push_back({hidden, {"known.supp", 3, "race buffer:scratch"}});
  in.analysis.traces = {{.path = "traces/zero2 run/rank0.shz", .rank = 0, .records = 500, .operations = 120},
                        {.path = "traces/zero2 run/rank1.shz", .rank = 1, .records = 480, .operations = 118,
                         .truncated = true, .truncation = "cut off at byte 9000"}};
  in.analysis.warnings = {"traces/zero2 run/rank1.shz: truncated at byte 9000; analysed up to its last whole chunk"};
  in.analysis.operations_checked = 238;
  in.analysis.operations_without_footprint = 4;
  return in;
}

}  // namespace streamhaz::report::testing
