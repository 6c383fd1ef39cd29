// A program that reaches the driver around the tracer's wrappers, for the wrappers' audit
// (scripts/gpu/driver_wrappers_check.sh): it launches a kernel every millisecond for SECONDS
// through the runtime (which the wrappers stand in) and, with `around`, every other one through
// the driver's own cuLaunchKernel, found with glibc's dlsym (asked for by version, which the
// tracer does not hook): a way to the driver a library could take.
//
//   wrapper_bypass_probe around|through [SECONDS]
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void bump(int* p) { atomicAdd(p, 1); }

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "around") != 0 && std::strcmp(argv[1], "through") != 0)) {
    std::fprintf(stderr, "usage: wrapper_bypass_probe around|through [SECONDS]\n");
    return 2;
  }
  const bool around = std::strcmp(argv[1], "around") == 0;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;

  int* counter = nullptr;
  if (cudaMalloc(&counter, sizeof(int)) != cudaSuccess || cudaMemset(counter, 0, sizeof(int)) != cudaSuccess) return 3;
  using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**);
  using DlsymFn = void* (*)(void*, const char*);
  LaunchFn driver_launch = nullptr;
  cudaFunction_t fn = nullptr;
  if (around) {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    DlsymFn glibc_dlsym = nullptr;
    for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5"})
      if (!glibc_dlsym) glibc_dlsym = reinterpret_cast<DlsymFn>(dlvsym(RTLD_DEFAULT, "dlsym", version));
    if (!driver || !glibc_dlsym) return 3;
    driver_launch = reinterpret_cast<LaunchFn>(glibc_dlsym(driver, "cuLaunchKernel"));
    if (!driver_launch || cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(bump)) != cudaSuccess) return 3;
  }
  long launches = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (around && launches % 2) {
      void* args[] = {&counter};
      if (driver_launch(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr) != CUDA_SUCCESS)
        return 3;
    } else {
      bump<<<1, 1>>>(counter);
    }
    ++launches;
    if (launches % 64 == 0) cudaDeviceSynchronize();
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  int got = 0;
  cudaMemcpy(&got, counter, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("launches %ld, counted %d\n", launches, got);
  return got == launches ? 0 : 1;
}
