#include "cuda_check.hpp"

#include <cstdio>
#include <cstdlib>

namespace reducer {

void fail(const std::string& message) {
  std::fprintf(stderr, "streamhaz-reducer: %s\n", message.c_str());
  std::exit(3);
}

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    fail(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
         cudaGetErrorString(status));
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
         cublasGetStatusString(status));
}

void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess)
    fail(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
         ncclGetErrorString(status));
}

}  // namespace reducer
