// analyzer_bench: the analyzer's performance targets (docs/analysis.md, "Performance") on a
// synthetic ZeRO-2-like trace: 2 ranks, 4 streams each (input copies, compute, reduction,
// optimizer), double-buffered IPG buckets with one event per buffer, many steps.
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
#include "streamhaz/analysis/check.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"
#include "synthetic_zero2.h"

using namespace streamhaz;

namespace {

constexpr int kWorld = bench::kZero2World;

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
    for (int r = 0; r < kWorld; ++r) bench::write_synthetic_zero2_rank(files[r], r, ops / kWorld, racy);
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
  const analysis::AnalysisResult result = analysis::check(analysis::CheckRequest{files, {}, std::nullopt}).analysis;
  const double check_s = seconds_since(t0);  // `check --no-sync`

  // `check` as it runs by default: the race check, then over-synchronisation, minimal
  // synchronisation and manifestation (which learn the steps from the race check's read).
  t0 = std::chrono::steady_clock::now();
  const analysis::CheckResult full = analysis::check(analysis::CheckRequest{files, {}, analysis::SyncOptions{}});
  const double full_s = seconds_since(t0);

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
  std::printf("check with the over-synchronisation pass: %.2f s (%zu sites judged); with it / without it: %.2f\n",
              full_s, full.analysis.sync_sites.size(), full_s / check_s);
  std::printf("  judged: %s\n", full.analysis.sync_scope.c_str());
  for (const auto& f : result.findings)
    std::printf("  %s: %s vs %s, %llu occurrences\n", f.title.c_str(), f.first.kind.c_str(), f.second.kind.c_str(),
                (unsigned long long)f.occurrences);
  return result.findings.empty() == !racy ? 0 : 3;
}
