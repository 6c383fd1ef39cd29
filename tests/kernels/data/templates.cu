// The layout of a parameter of type T depends on the template argument.
template <typename T>
__global__ void scale(T* data, T factor, long n) {
  for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) data[i] *= factor;
}

// A non-type template parameter leaves the layout known.
template <int kWidth>
__global__ void fill_rows(float* out, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows)
    for (int c = 0; c < kWidth; ++c) out[r * kWidth + c] = 0.0f;
}
