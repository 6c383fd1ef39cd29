// Host time per API call in an empty-kernel launch loop (and an event-record loop), for the
// tracer's overhead target: run once untraced and once under `streamhaz run`, subtract.
// Prints one line: launch_ns_median=... record_ns_median=... (median over batches), then the
// 10th and 90th percentiles and the mean of the launch batches. A third argument `args` launches
// a kernel with two pointer arguments and a count instead of none. Under sampled GPU times run
// enough batches to span several sampling periods (scripts/gpu/launch_overhead.sh does).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

__global__ void empty_kernel() {}
// An empty kernel with the arguments of a typical elementwise launch (two device pointers and a
// count): the pointer footprint tier scans these.
__global__ void args_kernel(float*, const float*, long) {}

struct Percentiles {
  double p10, p50, p90, mean;
};

template <class Fn> Percentiles ns_per_call(Fn&& fn, int batches, int per_batch, cudaStream_t s) {
  std::vector<double> per_call;
  for (int b = 0; b < batches; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) fn();
    auto t1 = std::chrono::steady_clock::now();
    // Drain between batches so the launch queue never fills (a full queue blocks the host).
    cudaStreamSynchronize(s);
    per_call.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / per_batch);
  }
  double sum = 0;
  for (double x : per_call) sum += x;
  std::sort(per_call.begin(), per_call.end());
  auto at = [&](double q) { return per_call[static_cast<size_t>(q * (per_call.size() - 1))]; };
  return {at(0.1), at(0.5), at(0.9), sum / per_call.size()};
}

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 200;
  const int per_batch = argc > 2 ? std::atoi(argv[2]) : 256;
  const bool with_args = argc > 3 && std::string_view(argv[3]) == "args";
  float *out = nullptr, *in = nullptr;
  cudaMalloc(&out, 1 << 20);
  cudaMalloc(&in, 1 << 20);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1, 0, s>>>();  // warm-up
  cudaStreamSynchronize(s);
  Percentiles launch = with_args
      ? ns_per_call([&] { args_kernel<<<1, 1, 0, s>>>(out, in, 4096); }, batches, per_batch, s)
      : ns_per_call([&] { empty_kernel<<<1, 1, 0, s>>>(); }, batches, per_batch, s);
  Percentiles record = ns_per_call([&] { cudaEventRecord(e, s); }, batches, per_batch, s);
  std::printf("launch_ns_median=%.1f record_ns_median=%.1f calls=%d launch_p10=%.1f launch_p90=%.1f launch_mean=%.1f\n",
              launch.p50, record.p50, batches * per_batch * 2, launch.p10, launch.p90, launch.mean);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
