// CPU cost of the recorder's per-call path, without CUDA: Recorder::kernel_launched and
// event_recorded driven as the glue drives them in an empty-kernel launch loop, through the
// real Session (chunk buffer, background flusher, trace file in a temporary folder).
// Prints ns per call, the median over batches. Built by bench/CMakeLists.txt.
//   tracer_recorder_bench [batches=2000] [calls_per_batch=256] [evict_mib=8]
// evict_mib: what the cold launch's "program work" writes before each call (8 MiB passes the
// core's own caches; 64 MiB and more a large last-level cache and the TLB's reach).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "streamhaz/tracer/session.h"

using namespace streamhaz::tracer;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kStream = 0x55d0c0ffee00;  // a created, non-blocking stream
constexpr uint64_t kEvent = 0x55d0c0ffef00;
constexpr uint64_t kFunction = 0x7f3a12345600;
// A typical PyTorch kernel name: long enough that building or measuring it costs something.
constexpr const char* kName =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `call(i)` in batches; between batches (untimed) the GPU's timings for the batch come
// back as CUPTI activity would deliver them, so pending correlations stay bounded.
template <class Call> double ns_per_call(Recorder& rec, int batches, int per_batch, uint64_t& corr, Call&& call,
                                         bool with_activity) {
  std::vector<double> per;
  per.reserve(batches);
  for (int b = 0; b < batches; ++b) {
    const uint64_t first = corr;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) call(corr += 2);  // other API calls take ids too
    auto t1 = std::chrono::steady_clock::now();
    per.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / per_batch);
    if (with_activity) {
      for (uint64_t c = first + 2; c <= corr; c += 2) rec.activity(c, c * 1000, c * 1000 + 1500);
    }
  }
  return median(per);
}

// Times the activity deliveries themselves (CUPTI's buffer thread, contending for the lock).
double activity_ns(Recorder& rec, int batches, int per_batch, uint64_t& corr, const KernelLaunch& k) {
  const StreamRef s{kStream, 0, false};
  std::vector<double> per;
  for (int b = 0; b < batches; ++b) {
    const uint64_t first = corr;
    for (int i = 0; i < per_batch; ++i) rec.kernel_launched(s, corr += 2, k);
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t c = first + 2; c <= corr; c += 2) rec.activity(c, c * 1000, c * 1000 + 1500);
    auto t1 = std::chrono::steady_clock::now();
    per.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / per_batch);
  }
  return median(per);
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int per_batch = argc > 2 ? std::atoi(argv[2]) : 256;
  const size_t evict_mib = argc > 3 ? static_cast<size_t>(std::max(1, std::atoi(argv[3]))) : 8;
  const fs::path dir = fs::temp_directory_path() / ("streamhaz-recorder-bench-" + std::to_string(getpid()));
  fs::remove_all(dir);

  const ProcessIdentity who{.rank = 0, .world_size = 1, .pid = getpid(), .host = "bench", .command = {}};
  SessionOptions options;
  options.out_dir = dir.string();
  options.flush_period = std::chrono::milliseconds(100);  // the flusher runs during the loops
  double launch = 0, launch_params = 0, launch_elementwise = 0, launch_foreach = 0, launch_cold = 0, record = 0, activity = 0;
  double sync = 0, sync_counting = 0;
  uint64_t records = 0, bytes = 0;
  {
    Session session(options, who, [&] { return base_header(who, "api"); });
    session.start_flusher();
    Recorder& rec = session.recorder();
    rec.stream_created(kStream, 0, 1, 0);
    rec.event_created(kEvent, 2);
    const StreamRef s{kStream, 0, false};

    KernelLaunch k;
    k.function = kFunction;
    k.name = kName;
    k.grid[0] = 1;
    k.block[0] = 1;
    uint64_t corr = 1000;
    // Warm-up: the name is interned, the tables have grown.
    launch = ns_per_call(rec, 50, per_batch, corr, [&](uint64_t c) { rec.kernel_launched(s, c, k); }, true);

    launch = ns_per_call(rec, batches, per_batch, corr, [&](uint64_t c) { rec.kernel_launched(s, c, k); }, true);
    record = ns_per_call(rec, batches, per_batch, corr, [&](uint64_t) { rec.event_recorded(kEvent, s); }, false);
    // A host synchronisation, and the same while steps are counted from the pattern (a program
    // without a step range, until its steps are found): one call repeated is never a step, so
    // every one is compared with the 1,024 before it.
    sync = ns_per_call(rec, batches, per_batch, corr, [&](uint64_t) { rec.stream_synchronized(s); }, false);
    rec.count_pattern_steps(6, [](size_t, uint64_t) {});
    sync_counting = ns_per_call(rec, batches, per_batch, corr, [&](uint64_t) { rec.stream_synchronized(s); }, false);
    rec.stop_counting_pattern_steps();
    activity = activity_ns(rec, batches, per_batch, corr, k);
    // The static/exact footprint tiers: 24 parameter bytes per launch (three pointers).
    const std::string param_bytes(24, '\x5a');
    k.params = param_bytes;
    launch_params =
        ns_per_call(rec, batches, per_batch, corr, [&](uint64_t c) { rec.kernel_launched(s, c, k); }, true);
    // The pointer tier on a foreach launch (multi_tensor_apply with 4 tensor lists, as AdamW's):
    // 144 tensor pointers into 32 caching-allocator segments, their sizes, block tables.
    rec.set_kernel_arguments(KernelArguments::Pointers);
    constexpr uint64_t kSegment = 2 << 20, kHeap = 0x7f0000000000;
    for (uint64_t i = 0; i < 32; ++i) rec.allocated(streamhaz::trace::AllocKind::Device, kHeap + i * kSegment, kSegment, 0);
    std::string foreach_params(3072, '\0');
    for (uint64_t t = 0; t < 144; ++t) {
      const uint64_t ptr = kHeap + (t % 32) * kSegment + (t / 32) * 4096;
      std::memcpy(foreach_params.data() + t * 8, &ptr, 8);
    }
    for (size_t off = 1152; off + 8 <= 1440; off += 8) {
      const uint64_t numel = 4096 + off;
      std::memcpy(foreach_params.data() + off, &numel, 8);
    }
    // An elementwise launch: the element count, a functor's scalar, three operand pointers.
    std::string elementwise_params(40, '\0');
    for (uint64_t i = 0; i < 3; ++i) {
      const uint64_t ptr = kHeap + i * kSegment + 8192;
      std::memcpy(elementwise_params.data() + 16 + i * 8, &ptr, 8);
    }
    k.params = elementwise_params;
    launch_elementwise =
        ns_per_call(rec, batches, per_batch, corr, [&](uint64_t c) { rec.kernel_launched(s, c, k); }, true);
    k.params = foreach_params;
    launch_foreach = ns_per_call(rec, batches / 4, per_batch, corr, [&](uint64_t c) { rec.kernel_launched(s, c, k); }, true);
    // The elementwise launch as a real run makes it: the program's own work between two calls
    // has pushed the tracer's tables out of the caches (`evict_mib` written before each call),
    // among 256 segments.
    for (uint64_t i = 32; i < 256; ++i) rec.allocated(streamhaz::trace::AllocKind::Device, kHeap + i * kSegment, kSegment, 0);
    k.params = elementwise_params;
    std::vector<char> program_work(evict_mib << 20);
    std::vector<double> cold;
    for (int i = 0; i < batches; ++i) {
      std::memset(program_work.data(), i, program_work.size());
      auto t0 = std::chrono::steady_clock::now();
      rec.kernel_launched(s, corr += 2, k);
      auto t1 = std::chrono::steady_clock::now();
      cold.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
      rec.activity(corr, corr * 1000, corr * 1000 + 1500);
    }
    launch_cold = median(cold);
    records = rec.last_seq();
    session.close();
    bytes = fs::file_size(session.path());
  }
  fs::remove_all(dir);
  std::printf("kernel_launched_ns_median=%.1f kernel_launched_params24_ns_median=%.1f "
              "kernel_launched_pointers3_ns_median=%.1f kernel_launched_foreach144_ns_median=%.1f kernel_launched_pointers3_cold_ns_median=%.1f event_recorded_ns_median=%.1f activity_ns_median=%.1f "
              "stream_synchronized_ns_median=%.1f stream_synchronized_counting_steps_ns_median=%.1f "
              "batches=%d per_batch=%d evict_mib=%zu seqs=%llu "
              "trace_bytes=%llu\n",
              launch, launch_params, launch_elementwise, launch_foreach, launch_cold, record, activity, sync, sync_counting,
              batches, per_batch, evict_mib,
              static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(bytes));
  return 0;
}
