#include "analysis_flags.h"

#include <map>
#include <string>

namespace streamhaz::cli {

CLI::Option* add_analysis_flags(CLI::App* cmd, AnalysisFlags& f) {
  cmd->add_option("--kernels", f.kernels,
                  "kernels.json from `streamhaz kernels scan`: static footprints for the kernels it summarises "
                  "(traces from `streamhaz run --footprints static`)")
      ->type_name("FILE");
  cmd->add_option("-j,--jobs", f.jobs,
                  "Threads that check ranks at once (0: every core from 16 ranks on, one below; the over-"
                  "synchronisation pass's parts that fall apart by rank or site: every core); the findings and "
                  "their order do not depend on it")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
  cmd->add_flag("--per-thread-host", f.per_thread_host,
                "Give each host thread its own clock instead of one per process in observed API order");
  auto* no_sync = cmd->add_flag("--no-sync", f.no_sync,
                                "Skip the over-synchronisation pass, the minimal synchronisation and race manifestation");
  cmd->add_option("--sync-window", f.sync_window,
                  "Records per trace the over-synchronisation pass judges: the steps after the warm-up that fit (it holds them in memory)")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{100000000}))
      ->capture_default_str();
  cmd->add_option("--sync-window-syncs", f.sync_window_syncs,
                  "Synchronisations per trace the over-synchronisation pass judges")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1000000}))
      ->capture_default_str();
  cmd->add_option("--oversync-min-cost", f.min_cost_pct,
                  "Per cent of the step time an over-synchronisation must cost to be a finding")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--step-range", f.step_range, "NVTX range that wraps one training step (for step times and the steps the over-synchronisation pass judges; without it, the run's repeating collectives and host synchronisations) ('|' separates names, a trailing '*' matches a prefix: 'step|ProfilerStep#*')")
      ->capture_default_str();
  cmd->add_option("--sync-algorithm", f.sync_algorithm,
                  "How the over-synchronisation pass finds what each site protects: witness (one check of the run "
                  "for every site) or removal (one check per site, the reference; slower)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, analysis::SyncAlgorithm>{{"witness", analysis::SyncAlgorithm::Witness},
                                                         {"removal", analysis::SyncAlgorithm::Removal}}))
      ->default_str("witness");
  cmd->add_option("--warmup-steps", f.warmup_steps,
                  "Steps the over-synchronisation pass leaves out at the start (allocator growth, library set-up)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  return no_sync;
}

analysis::CheckRequest check_request(const AnalysisFlags& f, std::vector<std::string> files) {
  analysis::CheckRequest r;
  r.files = std::move(files);
  r.analysis.per_thread_host = f.per_thread_host;
  r.analysis.kernels = f.kernels;
  r.analysis.jobs = f.jobs;
  if (!f.no_sync) {
    analysis::SyncOptions sync;
    sync.window_records = f.sync_window;
    sync.window_syncs = f.sync_window_syncs;
    sync.min_cost = f.min_cost_pct / 100.0;
    sync.replay.step_range = f.step_range;
    sync.warmup_steps = f.warmup_steps;
    sync.algorithm = f.sync_algorithm;
    r.sync = sync;
  }
  return r;
}

}  // namespace streamhaz::cli
