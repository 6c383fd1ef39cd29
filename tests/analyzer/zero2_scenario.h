// A ZeRO-2 overlapped backward with the synchronisation variants of DeepSpeed (docs/reducer.md,
// "The step" and "Sync modes"): gradients copied on the compute stream into a double-buffered IPG bucket,
// flushed on the reduction stream (pre-divide, in-place all-reduce, copy of this rank's
// partition out).
#pragma once

#include <string>
#include <vector>

#include "scenario.h"

namespace streamhaz::testing {

enum class Zero2Sync {
  Race,            // DeepSpeed 0.8.0-0.14.2 (e.g. 0.10.2): reduction waits for compute only
  Serialize,       // 0.14.3 on: compute also waits for the whole reduction stream
  EventPerBuffer,  // one event per IPG buffer: correct and most overlapped
  Device,          // cudaDeviceSynchronize in the flush (before 0.8.0)
  Host,            // cudaStreamSynchronize(reduction stream) in the flush (#5523's proposal)
};

struct Zero2Options {
  Zero2Sync sync = Zero2Sync::Race;
  bool index_reset = false;  // DeepSpeed #6993: the buffer index always resets to 0
  int steps = 3;
  int layers = 8;
  int layers_per_bucket = 2;  // 4 buckets per step
  int ipg_buffers = 2;
  uint64_t grad_bytes = 1024;
};

inline void zero2_rank(RankTraceBuilder& r, int rank, int world, const Zero2Options& o) {
  const StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream");
  const uint64_t bucket_bytes = o.grad_bytes * o.layers_per_bucket;
  const uint64_t partition_bytes = bucket_bytes / world;
  const int buckets = o.layers / o.layers_per_bucket;
  std::vector<uint64_t> ipg, grads;
  std::vector<EventId> buffer_free;
  for (int i = 0; i < o.ipg_buffers; ++i) {
    ipg.push_back(r.alloc(bucket_bytes, "ipg_buffer[" + std::to_string(i) + "]"));
    buffer_free.push_back(r.event());
  }
  for (int l = 0; l < o.layers; ++l) grads.push_back(r.alloc(o.grad_bytes, "grad[" + std::to_string(l) + "]"));
  const uint64_t fp32 = r.alloc(partition_bytes * buckets, "fp32_grad_partition");
  const uint64_t params = r.alloc(partition_bytes * buckets * world, "params");
  const EventId compute_done = r.event(), reduction_done = r.event();

  int idx = 0;
  for (int step = 0; step < o.steps; ++step) {
    r.push_range("backward");
    int in_bucket = 0, bucket = 0;
    for (int l = o.layers - 1; l >= 0; --l) {
      r.kernel(compute, "layer_backward", {reads(params, 64), writes(grads[l], o.grad_bytes)});
      if (in_bucket == 0) {  // about to write into ipg[idx]
        if (o.sync == Zero2Sync::Serialize) {
          r.record(reduction_done, reduction);
          r.wait(compute, reduction_done);
        } else if (o.sync == Zero2Sync::EventPerBuffer) {
          r.wait(compute, buffer_free[idx]);
        }
      }
      r.memcpy(compute, ipg[idx] + in_bucket * o.grad_bytes, grads[l], o.grad_bytes);
      if (++in_bucket < o.layers_per_bucket) continue;
      // Flush the bucket on the reduction stream.
      r.push_range("average_tensor");
      r.record(compute_done, compute);
      r.wait(reduction, compute_done);
      r.kernel(reduction, "pre_divide", {reads_writes(ipg[idx], bucket_bytes)});
      r.all_reduce(reduction, ipg[idx], ipg[idx], bucket_bytes / 4, TraceBuilder::comm(0));
      r.memcpy(reduction, fp32 + bucket * partition_bytes, ipg[idx] + rank * partition_bytes, partition_bytes);
      if (o.sync == Zero2Sync::EventPerBuffer) r.record(buffer_free[idx], reduction);
      if (o.sync == Zero2Sync::Device) r.device_sync();
      if (o.sync == Zero2Sync::Host) r.stream_sync(reduction);
      r.pop_range();
      idx = o.index_reset ? 0 : (idx + 1) % o.ipg_buffers;
      in_bucket = 0;
      ++bucket;
    }
    // End of backward: the optimizer waits for the reduction stream.
    r.record(reduction_done, reduction);
    r.wait(compute, reduction_done);
    r.kernel(compute, "optimizer_step", {reads_writes(fp32, partition_bytes * buckets)});
    r.nccl(compute, NcclKind::AllGather, params + rank * partition_bytes * buckets, params,
           partition_bytes * buckets / 4, TraceBuilder::comm(0));
    r.pop_range();
  }
}

inline TraceBuilder zero2(const Zero2Options& o, int world = 2) {
  TraceBuilder run(world);
  for (int i = 0; i < world; ++i) zero2_rank(run.rank(i), i, world, o);
  return run;
}

}  // namespace streamhaz::testing
