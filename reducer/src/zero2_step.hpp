// One ZeRO-2 training step with overlap_comm and contiguous_gradients, as in DeepSpeed's
// stage_1_and_2.py: gradients of a reversed backward are copied into IPG buffers on the compute
// stream and each full bucket is reduced on the reduction stream, ordered by the chosen
// SyncMode.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <vector>

#include "launcher.hpp"
#include "options.hpp"
#include "step_timing.hpp"

namespace reducer {

struct StepResult {
  StepTiming timing;
  std::int64_t corrupted_here = 0;       // in this rank's gradient partition
  std::int64_t corrupted_all_ranks = 0;  // summed over ranks
  double grad_norm = 0;                  // L2 norm of the whole reduced gradient
};

class Zero2Step {
 public:
  Zero2Step(const Options& options, const RankEnv& rank, ncclComm_t comm);
  ~Zero2Step();
  Zero2Step(const Zero2Step&) = delete;
  Zero2Step& operator=(const Zero2Step&) = delete;

  StepResult run(int step);

 private:
  struct BucketEntry {
    int layer;
    std::int64_t offset;  // in the IPG buffer, elements
  };

  void allocate_and_name();
  void backward(int step);
  void layer_backward(int layer, int step);
  void add_gradient_to_bucket(int layer);
  void flush_bucket();  // DeepSpeed's reduce_ipg_grads -> average_tensor
  void reduce_bucket(float* buffer);
  void copy_partition_out_of(float* buffer);
  void wait_for_reduction_on_compute();
  void optimizer_step();
  void allgather_params();
  void self_check(int step);

  // [begin, end) of the flat parameter space that `layer` occupies and that `rank` owns.
  std::int64_t partition_begin(int rank) const { return rank * partition_elems_; }

  Options options_;
  RankEnv rank_;
  ncclComm_t comm_;
  std::int64_t total_elems_;
  std::int64_t partition_elems_;

  cudaStream_t compute_ = nullptr;
  cudaStream_t reduction_ = nullptr;
  cublasHandle_t blas_ = nullptr;

  std::vector<float*> ipg_buffers_;
  std::vector<cudaEvent_t> buffer_free_;  // sync=event: last read of each buffer done
  std::vector<bool> buffer_free_recorded_;
  cudaEvent_t grads_ready_ = nullptr;     // compute -> reduction before each flush
  cudaEvent_t reduction_done_ = nullptr;  // reduction -> compute (serialize, end of backward)

  float* layer_grads_ = nullptr;     // each layer's gradient as the backward produces it
  float* params_ = nullptr;          // full fp32 parameters, all-gathered after the step
  float* grad_partition_ = nullptr;  // this rank's fp32 gradient partition
  __nv_bfloat16* gemm_a_ = nullptr;
  __nv_bfloat16* gemm_b_ = nullptr;
  __nv_bfloat16* gemm_c_ = nullptr;
  double* stats_device_ = nullptr;  // [local sumsq, local corrupted, global sumsq, global corrupted]
  double* stats_host_ = nullptr;

  int ipg_index_ = 0;
  std::int64_t bucket_used_ = 0;
  std::vector<BucketEntry> bucket_;
  StepTimeline timeline_;
};

}  // namespace reducer
