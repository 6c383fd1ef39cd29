// Failing loudly on CUDA, cuBLAS and NCCL errors: a rank that continues after one would
// only hang its peers.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

namespace reducer {

[[noreturn]] void fail(const std::string& message);

void check_cuda(cudaError_t status, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);
void check_nccl(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace reducer

#define CUDA_CHECK(call) ::reducer::check_cuda((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::reducer::check_cublas((call), #call, __FILE__, __LINE__)
#define NCCL_CHECK(call) ::reducer::check_nccl((call), #call, __FILE__, __LINE__)
