// Host time per API call in an empty-kernel launch loop (and an event-record loop), for the
// tracer's overhead target: run once untraced and once under `streamhaz run`, subtract.
// Prints one line: launch_ns_median=... record_ns_median=... (median over batches).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void empty_kernel() {}

template <class Fn> double median_ns_per_call(Fn&& fn, int batches, int per_batch, cudaStream_t s) {
  std::vector<double> per_call;
  for (int b = 0; b < batches; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) fn();
    auto t1 = std::chrono::steady_clock::now();
    // Drain between batches so the launch queue never fills (a full queue blocks the host).
    cudaStreamSynchronize(s);
    per_call.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / per_batch);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 200;
  const int per_batch = argc > 2 ? std::atoi(argv[2]) : 256;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1, 0, s>>>();  // warm-up
  cudaStreamSynchronize(s);
  double launch = median_ns_per_call([&] { empty_kernel<<<1, 1, 0, s>>>(); }, batches, per_batch, s);
  double record = median_ns_per_call([&] { cudaEventRecord(e, s); }, batches, per_batch, s);
  std::printf("launch_ns_median=%.1f record_ns_median=%.1f calls=%d\n", launch, record, batches * per_batch * 2);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
