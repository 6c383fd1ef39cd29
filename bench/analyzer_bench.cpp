// analyzer_bench: the analyzer's performance targets (DESIGN.md) on a synthetic ZeRO-2-like
// trace: 2 ranks, 4 streams each (input copies, compute, reduction, optimizer), double-
// buffered IPG buckets with one event per buffer, many steps.
//
//   analyzer_bench [OPERATIONS=10000000] [TMPDIR=/tmp] [race]
//
// `race` drops the per-buffer wait (DeepSpeed 0.10.2's one-way wait): every step then has
// IPG overwrite races, which exercises the finding-folding path.
//
// Prints operations checked per second on one core, peak RSS per operation of the process
// that reads and checks (the trace is written by a child process, so its memory does not
// count), and the time of the check relative to only reading the same files.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/sync.h"
#include "streamhaz/trace/builder.h"
#include "streamhaz/trace/reader.h"

using namespace streamhaz;
using trace::AllocKind;
using trace::EventId;
using trace::MemcpyKind;
using trace::RankTraceBuilder;
using trace::StreamId;

namespace {

constexpr int kWorld = 2;
constexpr int kLayers = 16;
constexpr int kLayersPerBucket = 4;
constexpr int kIpgBuffers = 2;
constexpr uint64_t kGradBytes = 1 << 16;

// One rank's trace, streamed to `path`, until it holds at least `ops` operations.
void write_rank(const std::string& path, int rank, uint64_t ops, bool racy) {
  RankTraceBuilder r(rank, kWorld, path);
  const StreamId input = r.stream("input stream"), compute = r.stream("compute stream"),
                 reduction = r.stream("reduction stream"), optimizer = r.stream("optimizer stream");
  const uint64_t bucket_bytes = kGradBytes * kLayersPerBucket;
  const uint64_t partition = bucket_bytes / kWorld;
  const int buckets = kLayers / kLayersPerBucket;
  std::vector<uint64_t> params, acts, grads, ipg;
  std::vector<EventId> buffer_free;
  for (int l = 0; l < kLayers; ++l) {
    params.push_back(r.alloc(kGradBytes, "param[" + std::to_string(l) + "]"));
    acts.push_back(r.alloc(kGradBytes, "activation[" + std::to_string(l) + "]"));
    grads.push_back(r.alloc(kGradBytes, "grad[" + std::to_string(l) + "]"));
  }
  for (int i = 0; i < kIpgBuffers; ++i) {
    ipg.push_back(r.alloc(bucket_bytes, "ipg_buffer[" + std::to_string(i) + "]"));
    buffer_free.push_back(r.event());
  }
  const uint64_t fp32 = r.alloc(partition * buckets, "fp32_grad_partition");
  const uint64_t batch_host = r.host_alloc(kGradBytes, true);
  const uint64_t batch = r.alloc(kGradBytes, "batch");
  const EventId input_ready = r.event(), compute_done = r.event(), reduction_done = r.event(),
                optimizer_done = r.event(), batch_used = r.event();
  const uint64_t comm = trace::TraceBuilder::comm(0);

  int idx = 0;
  while (r.operations() < ops) {
    r.wait(input, batch_used);
    r.memcpy(input, batch, batch_host, kGradBytes, MemcpyKind::HostToDevice);
    r.record(input_ready, input);
    r.wait(compute, input_ready);
    r.wait(compute, optimizer_done);
    r.push_range("forward");
    for (int l = 0; l < kLayers; ++l)
      r.kernel(compute, "layer_forward",
               {trace::reads(l ? acts[l - 1] : batch, kGradBytes), trace::reads(params[l], kGradBytes),
                trace::writes(acts[l], kGradBytes)});
    r.record(batch_used, compute);
    r.pop_range();
    r.push_range("backward");
    int in_bucket = 0, bucket = 0;
    for (int l = kLayers - 1; l >= 0; --l) {
      r.kernel(compute, "layer_backward",
               {trace::reads(acts[l], kGradBytes), trace::reads(params[l], kGradBytes),
                trace::writes(grads[l], kGradBytes)});
      if (in_bucket == 0 && !racy) r.wait(compute, buffer_free[idx]);
      r.memcpy(compute, ipg[idx] + in_bucket * kGradBytes, grads[l], kGradBytes);
      if (++in_bucket < kLayersPerBucket) continue;
      r.push_range("average_tensor");
      r.record(compute_done, compute);
      r.wait(reduction, compute_done);
      r.kernel(reduction, "pre_divide", {trace::reads_writes(ipg[idx], bucket_bytes)});
      r.all_reduce(reduction, ipg[idx], ipg[idx], bucket_bytes / 4, comm);
      r.memcpy(reduction, fp32 + bucket * partition, ipg[idx] + rank * partition, partition);
      r.record(buffer_free[idx], reduction);
      r.pop_range();
      idx = (idx + 1) % kIpgBuffers;
      in_bucket = 0;
      ++bucket;
    }
    r.record(reduction_done, reduction);
    r.wait(optimizer, reduction_done);
    r.kernel(optimizer, "optimizer_step",
             {trace::reads_writes(fp32, partition * buckets), trace::writes(params[rank], kGradBytes)});
    r.nccl(optimizer, trace::NcclKind::AllGather, params[rank], params[0], kGradBytes / 4, comm);
    r.record(optimizer_done, optimizer);
    r.pop_range();
  }
  r.close();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t ops = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  const std::filesystem::path tmp = argc > 2 ? argv[2] : std::filesystem::temp_directory_path().string();
  const bool racy = argc > 3 && std::string(argv[3]) == "race";
  const auto dir = tmp / ("streamhaz-analyzer-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int r = 0; r < kWorld; ++r) files.push_back((dir / ("rank" + std::to_string(r) + ".shz")).string());

  // Write the trace in a child: the parent's peak RSS is then the reader's and checker's.
  auto t0 = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    for (int r = 0; r < kWorld; ++r) write_rank(files[r], r, ops / kWorld, racy);
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "analyzer_bench: writing the trace failed\n");
    return 1;
  }
  const double gen_s = seconds_since(t0);
  uint64_t bytes = 0;
  for (const auto& f : files) bytes += std::filesystem::file_size(f);

  t0 = std::chrono::steady_clock::now();
  uint64_t records = 0;
  for (const auto& f : files) {
    trace::TraceReader reader(f);
    trace::Record rec;
    while (reader.next(rec)) ++records;
  }
  const double read_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  const analysis::AnalysisResult result = analysis::analyze(files);
  const double check_s = seconds_since(t0);

  // What `check` adds by default: over-synchronisation, minimal synchronisation, manifestation.
  t0 = std::chrono::steady_clock::now();
  std::vector<analysis::Finding> races = result.findings;
  const analysis::SyncReport sync = analysis::analyze_sync(files, {}, {}, &races);
  const double sync_s = seconds_since(t0);

  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const double peak_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;
  const uint64_t checked = result.operations_checked;
  std::filesystem::remove_all(dir);

  std::printf("trace: %d ranks, 4 streams each, %llu operations, %llu records, %.1f MB on disk (%.1f bytes/op), "
              "written in %.1f s\n",
              kWorld, (unsigned long long)checked, (unsigned long long)records, bytes / 1e6,
              double(bytes) / double(checked), gen_s);
  std::printf("findings: %zu, warnings: %zu\n", result.findings.size(), result.warnings.size());
  std::printf("read only:  %.2f s\n", read_s);
  std::printf("check:      %.2f s\n", check_s);
  std::printf("operations checked per second (one core): %.2f M/s (target >= 3 M/s)\n", checked / check_s / 1e6);
  std::printf("peak RSS per operation: %.1f bytes (peak RSS %.1f MB; target <= 150 bytes)\n",
              peak_bytes / double(checked), peak_bytes / 1e6);
  std::printf("check time / read-only time: %.2f\n", check_s / read_s);
  std::printf("over-synchronisation pass: %.2f s (%zu findings, %zu sites noted; first %llu records per rank); "
              "check with it / without it: %.2f\n",
              sync_s, sync.findings.size(), sync.notes.size(), (unsigned long long)analysis::SyncOptions{}.window_records,
              (check_s + sync_s) / check_s);
  for (const auto& f : result.findings)
    std::printf("  %s: %s vs %s, %llu occurrences\n", f.title.c_str(), f.first.kind.c_str(), f.second.kind.c_str(),
                (unsigned long long)f.occurrences);
  return result.findings.empty() == !racy ? 0 : 3;
}
