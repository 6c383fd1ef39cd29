#include "cuda_prelude.h"

#include <array>

namespace streamhaz::kernels {

namespace {

// The include guards of the runtime headers the prelude stands in for are defined, so that a
// toolkit found on the include path is skipped and the scan gives the same result with or
// without one. Anything a kernel uses that is missing here is an error in its body, and such a
// kernel is summarised conservatively (every pointer read-write), never guessed.
constexpr std::string_view kPrelude = R"(
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__
#define __DRIVER_TYPES_H__
#define __VECTOR_TYPES_H__
#define __DEVICE_LAUNCH_PARAMETERS_H__
#define __CUDA_BF16_H__
#define __CUDA_FP16_H__
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __grid_constant__
#define __CUDACC__ 1

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef enum cudaError { cudaSuccess = 0 } cudaError_t;
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) double2 { double x, y; };
extern __device__ const uint3 threadIdx;
extern __device__ const uint3 blockIdx;
extern __device__ const dim3 blockDim;
extern __device__ const dim3 gridDim;
extern __device__ const int warpSize;

struct __attribute__((aligned(2))) __nv_bfloat16 { unsigned short __x; };
struct __attribute__((aligned(2))) __half { unsigned short __x; };
__host__ __device__ __nv_bfloat16 __float2bfloat16(float);
__host__ __device__ float __bfloat162float(__nv_bfloat16);
__host__ __device__ __half __float2half(float);
__host__ __device__ float __half2float(__half);

__device__ void __syncthreads();
__device__ int __syncthreads_count(int);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ void __threadfence();
__device__ void __threadfence_block();
__device__ unsigned int __activemask();
__device__ unsigned int __ballot_sync(unsigned int, int);
__device__ int __popc(unsigned int);
__device__ int __clz(int);
template <class T> __device__ T __shfl_sync(unsigned int, T, int, int = 32);
template <class T> __device__ T __shfl_up_sync(unsigned int, T, unsigned int, int = 32);
template <class T> __device__ T __shfl_down_sync(unsigned int, T, unsigned int, int = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned int, T, int, int = 32);
template <class T> __device__ T __ldg(const T*);

#define STREAMHAZ_ATOMIC(name) \
  __device__ int name(int*, int); \
  __device__ unsigned int name(unsigned int*, unsigned int); \
  __device__ unsigned long long name(unsigned long long*, unsigned long long);
STREAMHAZ_ATOMIC(atomicAdd) STREAMHAZ_ATOMIC(atomicSub) STREAMHAZ_ATOMIC(atomicExch)
STREAMHAZ_ATOMIC(atomicMin) STREAMHAZ_ATOMIC(atomicMax) STREAMHAZ_ATOMIC(atomicAnd)
STREAMHAZ_ATOMIC(atomicOr) STREAMHAZ_ATOMIC(atomicXor)
#undef STREAMHAZ_ATOMIC
__device__ float atomicAdd(float*, float);
__device__ double atomicAdd(double*, double);
__device__ float atomicExch(float*, float);
__device__ unsigned int atomicInc(unsigned int*, unsigned int);
__device__ unsigned int atomicDec(unsigned int*, unsigned int);
__device__ int atomicCAS(int*, int, int);
__device__ unsigned int atomicCAS(unsigned int*, unsigned int, unsigned int);
__device__ unsigned long long atomicCAS(unsigned long long*, unsigned long long, unsigned long long);
)";

constexpr std::array<std::string_view, 12> kReadWrite = {
    "atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicAnd",
    "atomicOr",  "atomicXor", "atomicInc",  "atomicDec", "atomicCAS", "atomicAdd_block"};

}  // namespace

std::string_view cuda_prelude() { return kPrelude; }

IntrinsicAccess intrinsic_access(std::string_view name) {
  for (std::string_view n : kReadWrite)
    if (n == name) return IntrinsicAccess::ReadWrite;
  if (name == "__ldg") return IntrinsicAccess::Read;
  return IntrinsicAccess::None;
}

}  // namespace streamhaz::kernels
