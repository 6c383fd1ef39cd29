// The reducer's own kernels. Every launcher enqueues on the stream it is given.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace reducer {

// The gradient element `index` of `layer` on `rank` in `step`: a small integer, so that sums
// over ranks and the division by a power-of-two world size are exact in fp32.
__host__ __device__ inline int gradient_value(int layer, std::int64_t index, int step, int rank) {
  return static_cast<int>((index * 7 + layer * 13 + step * 5 + rank * 3) % 31) - 15;
}

void launch_fill_gradient(float* grad, std::int64_t count, int layer, int step, int rank,
                          cudaStream_t stream);
void launch_fill_bf16(__nv_bfloat16* data, std::int64_t count, cudaStream_t stream);
// An elementwise copy_ (of a gradient into the IPG bucket, or of the reduced partition out of it)
// where it is not a plain memcpy.
void launch_copy_elements(float* to, const float* from, std::int64_t count, cudaStream_t stream);
// DeepSpeed's gradient pre-division: the buffer is scaled by 1/world before the all-reduce.
void launch_predivide(float* buffer, std::int64_t count, float scale, cudaStream_t stream);
// Busy-waits on the GPU clock: a reduction stream that is slow, as on a congested network.
void launch_spin(std::int64_t microseconds, cudaStream_t stream);
// Plain SGD on this rank's partition, writing the updated values into the full parameter
// buffer at the partition's place (the all-gather then runs in place).
void launch_sgd_step(float* params_partition, const float* grad_partition, std::int64_t count,
                     float learning_rate, cudaStream_t stream);

// Adds to stats[0] the sum of squares of the partition and to stats[1] the number of
// elements that differ from the exact reduced value.
void launch_check_partition(const float* grad_partition, std::int64_t count,
                            std::int64_t partition_start, std::int64_t layer_elems, int step,
                            int world_size, double* stats, cudaStream_t stream);

}  // namespace reducer
