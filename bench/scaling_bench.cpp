// scaling_bench: how the race check scales with the number of ranks. For each rank count it
// writes a synthetic ZeRO-2 job (bench/synthetic_zero2.h; one communicator of all ranks, an
// all-reduce per IPG bucket and an all-gather per step) with the same operations per rank,
// checks it in a child process and prints, per rank count: CPU time per operation on one
// thread, with the default (projected) clocks, with them but no rank running ahead of a
// collective, and with the dense all-rank reference clocks; peak RSS per rank; and the
// wall-clock speed-up of --jobs 0 (every core) over one thread; and what the over-synchronisation
// pass (`check`'s default: judged window, minimal synchronisation, costs) adds on one thread, as
// the CPU time of check with it over check without it.
// It then extrapolates per-operation time and memory per rank to 16,384 ranks by a
// least-squares line through the measured points.
//
//   scaling_bench [OPS_PER_RANK=20000] [TMPDIR=/tmp] [RANKS=2,8,32,128,512,1024] [DENSE_UP_TO=1024] [keep|-]
//                 [REPEAT=1]
//
// DENSE_UP_TO: the largest rank count also checked with dense clocks. `keep` leaves the traces
// in TMPDIR (to check them with `streamhaz check` by hand). REPEAT: each check runs that many
// times, alternating one thread and all cores, and the table shows the fastest of each (on a
// shared machine the others' load only ever adds time).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/check.h"
#include "synthetic_zero2.h"

using namespace streamhaz;

namespace {

struct Measured {
  double cpu_s = 0, wall_s = 0, peak_mb = 0;
  uint64_t ops = 0;
  size_t findings = 0;
  bool ok = false;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Checks the files in a child process, so that its peak RSS is this check's alone. `sync`: the
// whole of `check` instead, race check and over-synchronisation pass (which learns the steps from
// the race check's read); a pass that did not run counts as a finding.
Measured check_in_child(const std::vector<std::string>& files, bool dense, unsigned jobs, bool run_ahead = true,
                        bool sync = false) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    analysis::AnalysisOptions o;
    o.dense_clocks = dense;
    o.jobs = jobs;
    if (!run_ahead) o.run_ahead = 0;
    o.backfill_timings = false;
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    const double t0 = now_s();
    Measured m;
    if (sync) {
      const analysis::CheckResult r = analysis::check(analysis::CheckRequest{files, o, analysis::SyncOptions{}});
      m.ops = r.analysis.operations_checked;
      m.findings = r.sync_ran ? 0 : 1;
    } else {
      const analysis::AnalysisResult r = analysis::analyze(files, o);
      m.ops = r.operations_checked;
      m.findings = r.findings.size();
    }
    m.wall_s = now_s() - t0;
    ::getrusage(RUSAGE_SELF, &after);
    auto secs = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    m.cpu_s = secs(after.ru_utime) - secs(before.ru_utime) + secs(after.ru_stime) - secs(before.ru_stime);
    m.ok = true;
    if (::write(fds[1], &m, sizeof m) != sizeof m) std::_Exit(1);
    std::_Exit(0);
  }
  ::close(fds[1]);
  Measured m;
  const bool got = ::read(fds[0], &m, sizeof m) == sizeof m;
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  m.peak_mb = double(usage.ru_maxrss) / 1024.0;
  return m;
}

// Writes the job's traces, one child process per core.
bool write_job(const std::vector<std::string>& files, uint64_t ops_per_rank) {
  const int world = static_cast<int>(files.size());
  const int procs = std::max(1u, std::thread::hardware_concurrency());
  std::vector<pid_t> children;
  for (int p = 0; p < procs; ++p) {
    const pid_t c = ::fork();
    if (c == 0) {
      for (int r = p; r < world; r += procs) bench::write_synthetic_zero2_rank(files[r], r, ops_per_rank, false, world);
      std::_Exit(0);
    }
    children.push_back(c);
  }
  bool ok = true;
  for (pid_t c : children) {
    int status = 0;
    ::waitpid(c, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

// Least-squares line y = a + b x.
std::pair<double, double> fit(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = double(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  const double d = n * sxx - sx * sx;
  if (n < 2 || d == 0) return {n ? sy / n : 0, 0};
  const double b = (n * sxy - sx * sy) / d;
  return {(sy - b * sx) / n, b};
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t ops_per_rank = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20000;
  const std::filesystem::path tmp = argc > 2 ? argv[2] : std::filesystem::temp_directory_path().string();
  std::vector<int> counts = {2, 8, 32, 128, 512, 1024};
  if (argc > 3) {
    counts.clear();
    std::stringstream in(argv[3]);
    for (std::string item; std::getline(in, item, ',');) counts.push_back(std::atoi(item.c_str()));
  }
  const int dense_up_to = argc > 4 ? std::atoi(argv[4]) : 1024;
  const bool keep = argc > 5 && std::string(argv[5]) == "keep";
  const int repeat = std::max(1, argc > 6 ? std::atoi(argv[6]) : 1);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());

  std::printf("synthetic ZeRO-2 job, %llu operations per rank, %u cores; CPU time per operation on one thread%s\n",
              (unsigned long long)ops_per_rank, cores,
              repeat > 1 ? (", fastest of " + std::to_string(repeat) + " runs (wall times too)").c_str() : "");
  std::printf("| ranks | operations | µs/op projected | µs/op, no running ahead | µs/op dense (reference) | "
              "dense / projected | peak RSS MB | KB per rank | wall s, 1 thread | wall s, %u threads | speed-up | "
              "with over-sync / without |\n",
              cores);
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> xs, us_per_op, kb_per_rank;
  double base_us = 0;  // at 8 ranks (the target's reference), else the first count
  int base_ranks = 0;
  bool failed = false;
  for (int world : counts) {
    const auto dir = tmp / ("streamhaz-scaling-bench-" + std::to_string(::getpid()) + "-" + std::to_string(world));
    std::filesystem::create_directories(dir);
    std::vector<std::string> files;
    for (int r = 0; r < world; ++r) files.push_back((dir / ("rank" + std::to_string(r) + ".shz")).string());
    if (!write_job(files, ops_per_rank)) {
      std::fprintf(stderr, "scaling_bench: writing the %d-rank job failed\n", world);
      return 1;
    }
    Measured one, all, dense, lockstep;
    double one_wall = 0;  // the fastest one-thread wall time, for the speed-up
    for (int r = 0; r < repeat; ++r) {
      const Measured a = check_in_child(files, false, 1), b = check_in_child(files, false, 0),
                     c = check_in_child(files, false, 1, false);
      if (!a.ok || !b.ok || !c.ok) {
        one.ok = all.ok = false;
        break;
      }
      if (r == 0 || a.cpu_s < one.cpu_s) one = a;
      if (r == 0 || a.wall_s < one_wall) one_wall = a.wall_s;
      if (r == 0 || b.wall_s < all.wall_s) all = b;
      if (r == 0 || c.cpu_s < lockstep.cpu_s) lockstep = c;
    }
    if (world <= dense_up_to) dense = check_in_child(files, true, 1);
    const Measured sync = check_in_child(files, false, 1, true, true);
    if (keep) std::printf("traces kept in %s\n", dir.c_str());
    else std::filesystem::remove_all(dir);
    if (!one.ok || !all.ok || one.findings || all.findings || lockstep.findings || (dense.ok && dense.findings)) {
      std::fprintf(stderr, "scaling_bench: the %d-rank check failed or found races in a clean job\n", world);
      failed = true;
      continue;
    }
    const double us = one.cpu_s / double(one.ops) * 1e6;
    const double dense_us = dense.ok ? dense.cpu_s / double(dense.ops) * 1e6 : 0;
    const double kb = one.peak_mb * 1024.0 / world;
    if (!base_ranks || world == 8) base_us = us, base_ranks = world;
    xs.push_back(world);
    us_per_op.push_back(us);
    kb_per_rank.push_back(kb);
    const std::string with_sync =
        sync.ok && !sync.findings ? std::to_string(sync.cpu_s / one.cpu_s).substr(0, 4) : "—";
    std::printf("| %d | %llu | %.3f | %.3f | %s | %s | %.1f | %.0f | %.2f | %.2f | %.2f× | %s |\n", world,
                (unsigned long long)one.ops, us, lockstep.cpu_s / double(lockstep.ops) * 1e6, dense.ok ? std::to_string(dense_us).substr(0, 5).c_str() : "—",
                dense.ok ? (std::to_string(dense_us / us).substr(0, 4) + "×").c_str() : "—", one.peak_mb, kb,
                one_wall, all.wall_s, one_wall / all.wall_s, with_sync.c_str());
    std::fflush(stdout);
  }
  if (xs.size() >= 2) {
    // Per-operation time against log2(ranks) (the frontier lookups are O(log ranks)); peak RSS
    // against ranks (a fixed part plus a part per rank).
    std::vector<double> logs, rss;
    for (size_t i = 0; i < xs.size(); ++i) logs.push_back(std::log2(xs[i])), rss.push_back(kb_per_rank[i] * xs[i]);
    const auto [a, b] = fit(logs, us_per_op);
    const auto [ma, mb] = fit(xs, rss);
    std::printf("per-operation time at %d ranks / at %d ranks: %.2f (target <= 1.2)\n", int(xs.back()), base_ranks,
                us_per_op.back() / base_us);
    std::printf("extrapolated to 16384 ranks (least squares over the measured points: µs/op on log2 ranks, peak RSS "
                "on ranks): %.3f µs/op, %.0f KB per rank\n",
                a + b * std::log2(16384.0), (ma + mb * 16384) / 16384);
  }
  return failed ? 1 : 0;
}
