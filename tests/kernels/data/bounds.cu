#include <cstddef>

// Grid-stride loop over a size_t count.
__global__ void grid_stride(double* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = 0;
}

// An early return guards the rest of the body.
__global__ void early_return(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = i;
}

// Inclusive bound, and an offset index: n + 1 and n + 2 elements.
__global__ void inclusive(float* a, float* b, int n) {
  int i = threadIdx.x;
  if (i <= n) a[i] = 0.0f;
  if (i < n) b[i + 2] = 0.0f;
}

// Two-dimensional bound: rows * cols elements.
__global__ void two_dims(float* m, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) m[i] = 0.0f;
}

// The index changes inside the loop body: no extent.
__global__ void index_changed(float* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    out[i] = 0.0f;
    i += 1;
  }
}

// A signed index that may be negative (from a parameter): no extent.
__global__ void signed_start(float* out, int start, int n) {
  for (int i = start; i < n; ++i) out[i] = 0.0f;
}

// The bound is not a parameter the launch carries: no extent.
__global__ void unguarded(float* out) { out[threadIdx.x] = 0.0f; }
