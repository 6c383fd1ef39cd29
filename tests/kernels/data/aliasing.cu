// Two parameters that may point into one buffer: the summary is per parameter.
__global__ void copy_maybe_in_place(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] * 2.0f;
}

// Writes through a const-qualified parameter after a const_cast.
__global__ void const_cast_write(const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) const_cast<float*>(in)[i] = 0.0f;
}

// Writes through a local copy of the pointer, moved by an offset.
__global__ void local_copy(float* out, long offset, long n) {
  float* p = out + offset;
  long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1.0f;
}

// The parameter itself is moved before use.
__global__ void moved_param(float* out, int offset, int n) {
  out += offset;
  int i = threadIdx.x;
  if (i < n) out[i] = 1.0f;
}

// The pointers are only compared; the flag is written once.
__global__ void only_compared(const float* a, const float* b, int* same) {
  if (a == b) *same = 1;
}
