// The synthetic ZeRO-2 trace of the benchmarks (see synthetic_zero2.h).
#include "synthetic_zero2.h"

#include <string>
#include <vector>

#include "streamhaz/testing/trace_builder.h"

namespace streamhaz::bench {
namespace {

using trace::AllocKind;
using trace::EventId;
using trace::MemcpyKind;
using trace::RankTraceBuilder;
using trace::StreamId;

constexpr int kLayers = 16;
constexpr int kLayersPerBucket = 4;
constexpr int kIpgBuffers = 2;
constexpr uint64_t kGradBytes = 1 << 16;

}  // namespace

void write_synthetic_zero2_rank(const std::string& path, int rank, uint64_t ops, bool racy, int world) {
  RankTraceBuilder r(rank, world, path);
  const StreamId input = r.stream("input stream"), compute = r.stream("compute stream"),
                 reduction = r.stream("reduction stream"), optimizer = r.stream("optimizer stream");
  const uint64_t bucket_bytes = kGradBytes * kLayersPerBucket;
  const uint64_t partition = bucket_bytes / static_cast<uint64_t>(world);
  const int buckets = kLayers / kLayersPerBucket;
  std::vector<uint64_t> params, acts, grads, ipg;
  std::vector<EventId> buffer_free;
  for (int l = 0; l < kLayers; ++l) {
    params.push_back(r.alloc(kGradBytes, "param[" + std::to_string(l) + "]"));
    acts.push_back(r.alloc(kGradBytes, "activation[" + std::to_string(l) + "]"));
    grads.push_back(r.alloc(kGradBytes, "grad[" + std::to_string(l) + "]"));
  }
  for (int i = 0; i < kIpgBuffers; ++i) {
    ipg.push_back(r.alloc(bucket_bytes, "ipg_buffer[" + std::to_string(i) + "]"));
    buffer_free.push_back(r.event());
  }
  const uint64_t fp32 = r.alloc(partition * buckets, "fp32_grad_partition");
  const uint64_t batch_host = r.host_alloc(kGradBytes, true);
  const uint64_t batch = r.alloc(kGradBytes, "batch");
  const EventId input_ready = r.event(), compute_done = r.event(), reduction_done = r.event(),
                optimizer_done = r.event(), batch_used = r.event();
  const uint64_t comm = trace::TraceBuilder::comm(0);

  int idx = 0;
  while (r.operations() < ops) {
    r.wait(input, batch_used);
    r.memcpy(input, batch, batch_host, kGradBytes, MemcpyKind::HostToDevice);
    r.record(input_ready, input);
    r.wait(compute, input_ready);
    r.wait(compute, optimizer_done);
    r.push_range("forward");
    for (int l = 0; l < kLayers; ++l)
      r.kernel(compute, "layer_forward",
               {trace::reads(l ? acts[l - 1] : batch, kGradBytes), trace::reads(params[l], kGradBytes),
                trace::writes(acts[l], kGradBytes)});
    r.record(batch_used, compute);
    r.pop_range();
    r.push_range("backward");
    int in_bucket = 0, bucket = 0;
    for (int l = kLayers - 1; l >= 0; --l) {
      r.kernel(compute, "layer_backward",
               {trace::reads(acts[l], kGradBytes), trace::reads(params[l], kGradBytes),
                trace::writes(grads[l], kGradBytes)});
      if (in_bucket == 0 && !racy) r.wait(compute, buffer_free[idx]);
      r.memcpy(compute, ipg[idx] + in_bucket * kGradBytes, grads[l], kGradBytes);
      if (++in_bucket < kLayersPerBucket) continue;
      r.push_range("average_tensor");
      r.record(compute_done, compute);
      r.wait(reduction, compute_done);
      r.kernel(reduction, "pre_divide", {trace::reads_writes(ipg[idx], bucket_bytes)});
      r.all_reduce(reduction, ipg[idx], ipg[idx], bucket_bytes / 4, comm);
      r.memcpy(reduction, fp32 + bucket * partition, ipg[idx] + rank * partition, partition);
      r.record(buffer_free[idx], reduction);
      r.pop_range();
      idx = (idx + 1) % kIpgBuffers;
      in_bucket = 0;
      ++bucket;
    }
    r.record(reduction_done, reduction);
    r.wait(optimizer, reduction_done);
    r.kernel(optimizer, "optimizer_step",
             {trace::reads_writes(fp32, partition * buckets), trace::writes(params[rank % kLayers], kGradBytes)});
    // Each rank gathers 2 * kGradBytes / world bytes into params[0] (and the next buffer), at
    // any rank count: the footprint of the 2-rank job.
    r.nccl(optimizer, trace::NcclKind::AllGather, params[rank % kLayers], params[0],
           kGradBytes / (2 * static_cast<uint64_t>(world)), comm);
    r.record(optimizer_done, optimizer);
    r.pop_range();
  }
  r.close();
}

}  // namespace streamhaz::bench
