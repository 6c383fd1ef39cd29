// report_bench: size and generation time of the HTML report and the Perfetto export on the
// synthetic ZeRO-2 trace (bench/synthetic_zero2.h).
//
//   report_bench [OPERATIONS=1000000] [TMPDIR=/tmp] [race] [DETAIL_OPS=200000] [KEEP_HTML_AS]
//
// `race` makes every step race (findings to focus the detail on). Prints the HTML size in
// bytes per operation and in MB, how many operations were drawn one by one and how many
// aggregated, and the time of each stage (analysis, rereading the timeline, writing), in CPU seconds.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/report/html_report.h"
#include "streamhaz/report/perfetto_export.h"
#include "streamhaz/report/timeline.h"
#include "synthetic_zero2.h"

using namespace streamhaz;

namespace {

// CPU seconds of this process: the development machine is shared, wall time is not ours alone.
double cpu_now() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t ops = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const std::filesystem::path tmp = argc > 2 ? argv[2] : std::filesystem::temp_directory_path().string();
  const bool racy = argc > 3 && std::string(argv[3]) == "race";
  report::HtmlReportOptions html;
  if (argc > 4) html.detail_ops = std::strtoull(argv[4], nullptr, 10);
  const auto dir = tmp / ("streamhaz-report-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int r = 0; r < bench::kZero2World; ++r) {
    files.push_back((dir / ("rank" + std::to_string(r) + ".shz")).string());
    bench::write_synthetic_zero2_rank(files.back(), r, ops / bench::kZero2World, racy);
  }

  double t0 = cpu_now();
  report::ReportInput input;
  input.analysis = analysis::analyze(files);
  const double analyse_s = cpu_now() - t0;
  t0 = cpu_now();
  const report::Timeline timeline = report::load_timeline(input.analysis.traces);
  const double timeline_s = cpu_now() - t0;

  t0 = cpu_now();
  const auto html_path = dir / "report.html";
  report::HtmlReportStats stats;
  {
    std::ofstream out(html_path);
    stats = report::write_html_report(out, input, timeline, html);
  }
  const double html_s = cpu_now() - t0;
  t0 = cpu_now();
  const auto perfetto_path = dir / "trace.json";
  {
    std::ofstream out(perfetto_path);
    report::write_perfetto_trace(out, timeline, input.analysis.findings);
  }
  const double perfetto_s = cpu_now() - t0;
  const double html_bytes = double(std::filesystem::file_size(html_path));
  const double perfetto_bytes = double(std::filesystem::file_size(perfetto_path));
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  if (argc > 5) std::filesystem::copy_file(html_path, argv[5], std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove_all(dir);

  const uint64_t n = timeline.total_ops();
  std::printf("trace: %d ranks, %llu operations, %zu findings\n", bench::kZero2World, (unsigned long long)n,
              input.analysis.findings.size());
  std::printf("html: %.2f MB (%.1f bytes/operation); %llu operations drawn, %llu aggregated into %llu bins "
              "(--detail-ops %llu)\n",
              html_bytes / 1e6, html_bytes / double(n), (unsigned long long)stats.ops_detailed,
              (unsigned long long)stats.ops_aggregated, (unsigned long long)stats.bins,
              (unsigned long long)html.detail_ops);
  std::printf("perfetto json: %.1f MB (%.1f bytes/operation)\n", perfetto_bytes / 1e6, perfetto_bytes / double(n));
  std::printf("CPU time: analysis %.2f s, timeline reread %.2f s, html %.2f s, perfetto %.2f s\n", analyse_s,
              timeline_s, html_s, perfetto_s);
  std::printf("report total (analysis + timeline + html): %.2f s; timeline + html / analysis: %.2f\n",
              analyse_s + timeline_s + html_s, (timeline_s + html_s) / analyse_s);
  std::printf("peak RSS: %.1f MB (%.1f bytes/operation)\n", usage.ru_maxrss / 1e3, usage.ru_maxrss * 1024.0 / double(n));
  return 0;
}
