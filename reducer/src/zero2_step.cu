#include "zero2_step.hpp"

#include <nvtx3/nvToolsExtCudaRt.h>
#include <streamhaz/annotate.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "cuda_check.hpp"
#include "kernels.cuh"
#include "nvtx_range.hpp"

namespace reducer {
namespace {

constexpr float kLearningRate = 1.0f / 1024;

template <typename T>
T* device_alloc(std::int64_t count) {
  void* ptr = nullptr;
  CUDA_CHECK(cudaMalloc(&ptr, static_cast<std::size_t>(count) * sizeof(T)));
  return static_cast<T*>(ptr);
}

void name_stream(cudaStream_t stream, const char* name) {
  nvtxNameCudaStreamA(stream, name);
  streamhaz_name_stream(stream, name);
}

}  // namespace

Zero2Step::Zero2Step(const Options& options, const RankEnv& rank, ncclComm_t comm)
    : options_(options),
      rank_(rank),
      comm_(comm),
      total_elems_(std::int64_t{options.layers} * options.layer_elems),
      partition_elems_(total_elems_ / rank.world_size),
      timeline_(options.layers, options.layers + 1) {
  // Non-blocking streams, like torch.cuda.Stream(): no implicit ordering with stream 0.
  CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&reduction_, cudaStreamNonBlocking));
  name_stream(compute_, "compute stream");
  name_stream(reduction_, "reduction stream");
  CUBLAS_CHECK(cublasCreate(&blas_));
  CUBLAS_CHECK(cublasSetStream(blas_, compute_));
  CUDA_CHECK(cudaEventCreateWithFlags(&grads_ready_, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&reduction_done_, cudaEventDisableTiming));
  allocate_and_name();
}

void Zero2Step::allocate_and_name() {
  for (int i = 0; i < options_.ipg_buffers; ++i) {
    float* buffer = device_alloc<float>(options_.bucket_elems);
    std::string name = "ipg_buffer[" + std::to_string(i) + "]";
    streamhaz_name_buffer(buffer, options_.bucket_elems * sizeof(float), name.c_str());
    ipg_buffers_.push_back(buffer);
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    buffer_free_.push_back(event);
    buffer_free_recorded_.push_back(false);
  }
  layer_grads_ = device_alloc<float>(total_elems_);
  params_ = device_alloc<float>(total_elems_);
  grad_partition_ = device_alloc<float>(partition_elems_);
  streamhaz_name_buffer(layer_grads_, total_elems_ * sizeof(float), "layer_grads");
  streamhaz_name_buffer(params_, total_elems_ * sizeof(float), "params");
  streamhaz_name_buffer(grad_partition_, partition_elems_ * sizeof(float), "grad_partition");
  CUDA_CHECK(cudaMemsetAsync(params_, 0, total_elems_ * sizeof(float), compute_));

  std::int64_t gemm_elems = std::int64_t{options_.gemm_dim} * options_.gemm_dim;
  if (gemm_elems > 0) {
    gemm_a_ = device_alloc<__nv_bfloat16>(gemm_elems);
    gemm_b_ = device_alloc<__nv_bfloat16>(gemm_elems);
    gemm_c_ = device_alloc<__nv_bfloat16>(gemm_elems);
    launch_fill_bf16(gemm_a_, gemm_elems, compute_);
    launch_fill_bf16(gemm_b_, gemm_elems, compute_);
  }
  stats_device_ = device_alloc<double>(4);
  CUDA_CHECK(cudaMallocHost(&stats_host_, 4 * sizeof(double)));
  CUDA_CHECK(cudaStreamSynchronize(compute_));
}

Zero2Step::~Zero2Step() {
  cudaDeviceSynchronize();
  for (float* buffer : ipg_buffers_) cudaFree(buffer);
  for (cudaEvent_t event : buffer_free_) cudaEventDestroy(event);
  for (void* ptr : {static_cast<void*>(layer_grads_), static_cast<void*>(params_),
                    static_cast<void*>(grad_partition_), static_cast<void*>(gemm_a_),
                    static_cast<void*>(gemm_b_), static_cast<void*>(gemm_c_),
                    static_cast<void*>(stats_device_)})
    cudaFree(ptr);
  cudaFreeHost(stats_host_);
  cudaEventDestroy(grads_ready_);
  cudaEventDestroy(reduction_done_);
  cublasDestroy(blas_);
  cudaStreamDestroy(compute_);
  cudaStreamDestroy(reduction_);
}

StepResult Zero2Step::run(int step) {
  NvtxRange range("step");
  timeline_.begin_step(compute_);
  // Gradients start from zero each step, so a flush that never lands is seen as corruption.
  CUDA_CHECK(cudaMemsetAsync(grad_partition_, 0, partition_elems_ * sizeof(float), compute_));
  backward(step);
  optimizer_step();
  allgather_params();
  timeline_.end_step(compute_);
  self_check(step);
  CUDA_CHECK(cudaStreamSynchronize(compute_));

  StepResult result;
  result.timing = timeline_.collect();
  result.corrupted_here = static_cast<std::int64_t>(stats_host_[1]);
  result.corrupted_all_ranks = static_cast<std::int64_t>(stats_host_[3]);
  result.grad_norm = std::sqrt(stats_host_[2]);
  return result;
}

void Zero2Step::backward(int step) {
  NvtxRange range("backward");
  for (int layer = options_.layers - 1; layer >= 0; --layer) {
    layer_backward(layer, step);
    add_gradient_to_bucket(layer);
  }
  if (bucket_used_ > 0) flush_bucket();
  wait_for_reduction_on_compute();
}

void Zero2Step::layer_backward(int layer, int step) {
  timeline_.compute_begin(compute_);
  if (options_.gemm_dim > 0) {
    // Stands in for the layer's real backward: realistic tensor-core time, result unused.
    const float alpha = 1.0f, beta = 0.0f;
    const int n = options_.gemm_dim;
    CUBLAS_CHECK(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, gemm_a_,
                              CUDA_R_16BF, n, gemm_b_, CUDA_R_16BF, n, &beta, gemm_c_,
                              CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  launch_fill_gradient(layer_grads_ + std::int64_t{layer} * options_.layer_elems,
                       options_.layer_elems, layer, step, rank_.rank, compute_);
  timeline_.compute_end(compute_);
}

// DeepSpeed's reduce_independent_p_g_buckets_and_remove_grads with contiguous_gradients.
void Zero2Step::add_gradient_to_bucket(int layer) {
  if (bucket_used_ + options_.layer_elems > options_.bucket_elems) flush_bucket();
  if (bucket_used_ == 0 && options_.sync == SyncMode::event &&
      buffer_free_recorded_[ipg_index_]) {
    // The only wait a correct schedule needs: the last read of this buffer, nothing else.
    CUDA_CHECK(cudaStreamWaitEvent(compute_, buffer_free_[ipg_index_], 0));
  }
  float* destination = ipg_buffers_[ipg_index_] + bucket_used_;
  const float* gradient = layer_grads_ + std::int64_t{layer} * options_.layer_elems;
  if (options_.bucket_copy == BucketCopy::kernel)
    launch_copy_elements(destination, gradient, options_.layer_elems, compute_);
  else
    CUDA_CHECK(cudaMemcpyAsync(destination, gradient, options_.layer_elems * sizeof(float),
                               cudaMemcpyDeviceToDevice, compute_));
  bucket_.push_back({layer, bucket_used_});
  bucket_used_ += options_.layer_elems;
}

void Zero2Step::flush_bucket() {
  NvtxRange range("average_tensor");
  switch (options_.sync) {
    case SyncMode::device:
      // Before 0.8.0: torch.cuda.synchronize() at the start of average_tensor.
      CUDA_CHECK(cudaDeviceSynchronize());
      break;
    case SyncMode::host:
      // The #5523 proposal: reduction_stream.synchronize() before reusing the buffer.
      CUDA_CHECK(cudaStreamSynchronize(reduction_));
      [[fallthrough]];
    default:
      // 0.8.0 on: reduction_stream.wait_stream(current_stream()).
      CUDA_CHECK(cudaEventRecord(grads_ready_, compute_));
      CUDA_CHECK(cudaStreamWaitEvent(reduction_, grads_ready_, 0));
      break;
  }
  if (options_.sync == SyncMode::serialize) {
    // 0.14.3 on (#5606): current_stream().wait_stream(reduction_stream) as well.
    CUDA_CHECK(cudaEventRecord(reduction_done_, reduction_));
    CUDA_CHECK(cudaStreamWaitEvent(compute_, reduction_done_, 0));
  }

  float* buffer = ipg_buffers_[ipg_index_];
  timeline_.comm_begin(reduction_);
  reduce_bucket(buffer);
  copy_partition_out_of(buffer);
  if (options_.sync == SyncMode::event) {
    CUDA_CHECK(cudaEventRecord(buffer_free_[ipg_index_], reduction_));
    buffer_free_recorded_[ipg_index_] = true;
  }
  timeline_.comm_end(reduction_);

  bucket_.clear();
  bucket_used_ = 0;
  // #6993: clearing the bucket also reset the ping-pong index, so the swap that follows always
  // lands on the same buffer and double buffering collapses to one buffer.
  if (options_.bug == Bug::index_reset) ipg_index_ = 0;
  ipg_index_ = (ipg_index_ + 1) % options_.ipg_buffers;
}

void Zero2Step::reduce_bucket(float* buffer) {
  launch_predivide(buffer, bucket_used_, 1.0f / static_cast<float>(rank_.world_size), reduction_);
  if (options_.comm_delay_us > 0) launch_spin(options_.comm_delay_us, reduction_);
  if (!options_.reduce_scatter) {
    NCCL_CHECK(ncclAllReduce(buffer, buffer, bucket_used_, ncclFloat, ncclSum, comm_, reduction_));
    return;
  }
  // reduce_scatter=true: each slice of the bucket is reduced (in place) to the rank whose
  // partition holds it; all in one NCCL group.
  NCCL_CHECK(ncclGroupStart());
  for (const auto& entry : bucket_) {
    std::int64_t layer_begin = entry.layer * options_.layer_elems;
    for (int owner = 0; owner < rank_.world_size; ++owner) {
      std::int64_t begin = std::max(layer_begin, partition_begin(owner));
      std::int64_t end = std::min(layer_begin + options_.layer_elems,
                                  partition_begin(owner) + partition_elems_);
      if (begin >= end) continue;
      float* slice = buffer + entry.offset + (begin - layer_begin);
      NCCL_CHECK(ncclReduce(slice, slice, end - begin, ncclFloat, ncclSum, owner, comm_,
                            reduction_));
    }
  }
  NCCL_CHECK(ncclGroupEnd());
}

void Zero2Step::copy_partition_out_of(float* buffer) {
  const std::int64_t own_begin = partition_begin(rank_.rank);
  for (const auto& entry : bucket_) {
    std::int64_t layer_begin = entry.layer * options_.layer_elems;
    std::int64_t begin = std::max(layer_begin, own_begin);
    std::int64_t end = std::min(layer_begin + options_.layer_elems, own_begin + partition_elems_);
    if (begin >= end) continue;
    float* to = grad_partition_ + (begin - own_begin);
    const float* from = buffer + entry.offset + (begin - layer_begin);
    if (options_.bucket_copy == BucketCopy::kernel)
      launch_copy_elements(to, from, end - begin, reduction_);
    else
      CUDA_CHECK(cudaMemcpyAsync(to, from, (end - begin) * sizeof(float), cudaMemcpyDeviceToDevice,
                                 reduction_));
  }
}

void Zero2Step::wait_for_reduction_on_compute() {
  CUDA_CHECK(cudaEventRecord(reduction_done_, reduction_));
  CUDA_CHECK(cudaStreamWaitEvent(compute_, reduction_done_, 0));
}

void Zero2Step::optimizer_step() {
  NvtxRange range("optimizer_step");
  launch_sgd_step(params_ + partition_begin(rank_.rank), grad_partition_, partition_elems_,
                  kLearningRate, compute_);
}

void Zero2Step::allgather_params() {
  NvtxRange range("allgather_params");
  float* own = params_ + partition_begin(rank_.rank);
  NCCL_CHECK(ncclAllGather(own, params_, partition_elems_, ncclFloat, comm_, compute_));
}

void Zero2Step::self_check(int step) {
  NvtxRange range("self_check");
  CUDA_CHECK(cudaMemsetAsync(stats_device_, 0, 2 * sizeof(double), compute_));
  launch_check_partition(grad_partition_, partition_elems_, partition_begin(rank_.rank),
                         options_.layer_elems, step, rank_.world_size, stats_device_, compute_);
  NCCL_CHECK(ncclAllReduce(stats_device_, stats_device_ + 2, 2, ncclDouble, ncclSum, comm_,
                           compute_));
  CUDA_CHECK(cudaMemcpyAsync(stats_host_, stats_device_, 4 * sizeof(double),
                             cudaMemcpyDeviceToHost, compute_));
}

}  // namespace reducer
