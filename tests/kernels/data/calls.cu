// Device functions in the same file are followed.
__device__ void store(float* p, int i, float v) { p[i] = v; }
__device__ float load(const float* p, int i) { return p[i]; }

__global__ void through_device_functions(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) store(out, i, load(in, i));
}

// Atomics read and write their target.
__global__ void histogram(const int* keys, unsigned int* bins, int n, int nbins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[keys[i] % nbins], 1u);
}

__global__ void accumulate(float* acc, const float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&acc[i], v[i]);
}

// A function defined elsewhere may do anything with the pointer.
__device__ void defined_elsewhere(float* p);
__global__ void passes_on(float* p, const float* q) {
  defined_elsewhere(p);
  (void)q;
}

// A pointer stored into memory escapes.
__global__ void stores_pointer(float** table, float* p) { table[0] = p; }
