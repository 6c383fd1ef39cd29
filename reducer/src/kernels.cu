#include "kernels.cuh"

#include "cuda_check.hpp"

namespace reducer {
namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t count) {
  std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 132 * 16 ? (blocks > 0 ? blocks : 1) : 132 * 16);
}

__global__ void fill_gradient(float* grad, std::int64_t count, int layer, int step, int rank) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    grad[i] = static_cast<float>(gradient_value(layer, i, step, rank));
}

__global__ void fill_bf16(__nv_bfloat16* data, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    data[i] = __float2bfloat16(static_cast<float>(i % 17) * 0.0625f - 0.5f);
}

__global__ void copy_elements(float* to, const float* from, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    to[i] = from[i];
}

__global__ void predivide(float* buffer, std::int64_t count, float scale) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    buffer[i] *= scale;
}

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void spin(std::uint64_t nanoseconds) {
  std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < nanoseconds) {
  }
}

__global__ void sgd_step(float* params, const float* grad, std::int64_t count, float lr) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    params[i] -= lr * grad[i];
}

__global__ void check_partition(const float* grad, std::int64_t count,
                                std::int64_t partition_start, std::int64_t layer_elems,
                                int step, int world_size, double* stats) {
  double sum_of_squares = 0;
  double mismatches = 0;
  const float inverse_world = 1.0f / static_cast<float>(world_size);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t flat = partition_start + i;
    int layer = static_cast<int>(flat / layer_elems);
    std::int64_t index = flat % layer_elems;
    int sum = 0;
    for (int rank = 0; rank < world_size; ++rank) sum += gradient_value(layer, index, step, rank);
    float expected = static_cast<float>(sum) * inverse_world;
    float actual = grad[i];
    sum_of_squares += static_cast<double>(actual) * actual;
    mismatches += actual != expected ? 1.0 : 0.0;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    sum_of_squares += __shfl_down_sync(0xffffffffu, sum_of_squares, offset);
    mismatches += __shfl_down_sync(0xffffffffu, mismatches, offset);
  }
  // Squares of multiples of 1/world are exact in double, so the atomic order cannot change
  // the result: the norm stays bit-identical across runs.
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&stats[0], sum_of_squares);
    atomicAdd(&stats[1], mismatches);
  }
}

}  // namespace

void launch_fill_gradient(float* grad, std::int64_t count, int layer, int step, int rank,
                          cudaStream_t stream) {
  fill_gradient<<<blocks_for(count), kThreads, 0, stream>>>(grad, count, layer, step, rank);
  CUDA_CHECK(cudaGetLastError());
}

void launch_fill_bf16(__nv_bfloat16* data, std::int64_t count, cudaStream_t stream) {
  fill_bf16<<<blocks_for(count), kThreads, 0, stream>>>(data, count);
  CUDA_CHECK(cudaGetLastError());
}

void launch_copy_elements(float* to, const float* from, std::int64_t count, cudaStream_t stream) {
  copy_elements<<<blocks_for(count), kThreads, 0, stream>>>(to, from, count);
  CUDA_CHECK(cudaGetLastError());
}

void launch_predivide(float* buffer, std::int64_t count, float scale, cudaStream_t stream) {
  predivide<<<blocks_for(count), kThreads, 0, stream>>>(buffer, count, scale);
  CUDA_CHECK(cudaGetLastError());
}

void launch_spin(std::int64_t microseconds, cudaStream_t stream) {
  spin<<<1, 1, 0, stream>>>(static_cast<std::uint64_t>(microseconds) * 1000);
  CUDA_CHECK(cudaGetLastError());
}

void launch_sgd_step(float* params_partition, const float* grad_partition, std::int64_t count,
                     float learning_rate, cudaStream_t stream) {
  sgd_step<<<blocks_for(count), kThreads, 0, stream>>>(params_partition, grad_partition, count,
                                                       learning_rate);
  CUDA_CHECK(cudaGetLastError());
}

void launch_check_partition(const float* grad_partition, std::int64_t count,
                            std::int64_t partition_start, std::int64_t layer_elems, int step,
                            int world_size, double* stats, cudaStream_t stream) {
  check_partition<<<blocks_for(count), kThreads, 0, stream>>>(
      grad_partition, count, partition_start, layer_elems, step, world_size, stats);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace reducer
