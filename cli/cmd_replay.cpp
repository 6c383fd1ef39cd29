// `streamhaz replay TRACE... [--what-if SPEC]...`: replays a traced run from its own GPU
// times and predicts the step time of an edited one (docs/sync-and-replay.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "messages.h"
#include "streamhaz/analysis/replay.h"
#include "streamhaz/analysis/sync.h"
#include "streamhaz/trace/input_file.h"
#include "streamhaz/trace/printable.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::cli {
namespace {

struct ReplayCliOptions {
  std::vector<std::string> traces;
  std::vector<std::string> what_ifs;
  std::string step_range = "step";
  double host_gap_us = 10;
};

std::string ms(int64_t ns) { return fmt::format("{:.1f} µs", static_cast<double>(ns) / 1000.0); }

std::string pct(int64_t v, int64_t base) {
  return base > 0 ? fmt::format("{:+.2f} %", 100.0 * static_cast<double>(v - base) / static_cast<double>(base))
                  : std::string("n/a");
}

// --what-if takes one line, or @FILE for a spec file (one what-if per line): a regular file
// of hand-written or `check --minimal-sync` lines, far below this.
constexpr uint64_t kMaxWhatIfFileBytes = 16ull << 20;

analysis::WhatIf read_what_ifs(const std::vector<std::string>& args) {
  analysis::WhatIf w;
  for (const std::string& a : args) {
    if (!a.empty() && a[0] == '@') {
      std::string text;
      try {
        text = trace::read_side_file(a.substr(1), kMaxWhatIfFileBytes);
      } catch (const trace::TraceError& e) {
        throw analysis::WhatIfError("cannot read what-if file " + a.substr(1) + ": " + e.reason());
      }
      std::istringstream in(text);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        try {
          analysis::parse_what_if(line, w);
        } catch (const analysis::WhatIfError& e) {
          throw analysis::WhatIfError(fmt::format("{}:{}: {}", a.substr(1), n, e.what()));
        }
      }
    } else {
      analysis::parse_what_if(a, w);
    }
  }
  return w;
}

int usage_error(const std::string& what) { return cli::usage_error("replay", what); }

int run_replay(const ReplayCliOptions& o) {
  analysis::WhatIf w;
  try {
    w = read_what_ifs(o.what_ifs);
  } catch (const analysis::WhatIfError& e) {
    return usage_error(e.what());
  }
  const std::vector<std::string> files = trace::expand_trace_paths(o.traces);
  std::vector<std::string> reading;  // truncated traces, names cut: said before the numbers
  const std::vector<analysis::RankRecords> run = analysis::load_run(files, UINT64_MAX, nullptr, &reading);
  warnings("replay", reading);
  analysis::ReplayOptions options;
  options.step_range = o.step_range;
  options.host_gap_threshold_ns = static_cast<int64_t>(o.host_gap_us * 1000);
  std::unique_ptr<analysis::Replayer> replay;
  try {
    replay = std::make_unique<analysis::Replayer>(run, options);
    // An edit of nothing (rank 7 of a 2-rank run, a stream no operation is on) is refused,
    // rather than predicting a confident "+0.00 %".
    analysis::check_what_if_targets(run, w);
    for (const analysis::DurationScale& s : w.scales)
      if (!replay->scales_any(s))
        throw analysis::WhatIfError(fmt::format("scale{}{}: no operation of the run matches",
                                                s.stream.empty() ? "" : " stream=" + s.stream,
                                                s.kernel.empty() ? "" : " kernel=" + s.kernel));
  } catch (const analysis::WhatIfError& e) {
    return usage_error(e.what());
  }
  const analysis::Schedule& measured = replay->measured();
  const analysis::Schedule unchanged = replay->run_unchanged();
  std::cout << fmt::format("replay of {} trace(s)\n", files.size());
  std::cout << fmt::format("  measured step:      {}", ms(measured.step_ns));
  for (size_t i = 0; i < run.size(); ++i)
    std::cout << fmt::format("{}rank {} {}", i ? ", " : " (", run[i].rank, ms(measured.rank_step_ns[i]));
  std::cout << ")\n";
  if (const std::string steps = analysis::describe_step_times(measured, run); !steps.empty())
    std::cout << "  measured " << trace::printable(steps) << "\n";
  std::cout << fmt::format("  replayed unchanged: {} ({} against measured)\n", ms(unchanged.step_ns),
                           pct(unchanged.step_ns, measured.step_ns));
  if (!w.empty()) {
    std::vector<std::string> advice, rotation_notes;
    std::vector<analysis::RankRecords> edited;
    try {
      // The buffer rotation first: the other edits (minimal-sync included) apply to its result.
      std::vector<analysis::RankRecords> base;
      if (w.rotation) {
        analysis::WhatIf rotation_edits;
        base = analysis::apply_edits(analysis::rotate_buffers(run, *w.rotation, rotation_edits, &rotation_notes),
                                     rotation_edits);
      }
      const std::vector<analysis::RankRecords>& source = w.rotation ? base : run;
      if (w.minimal_sync) {
        const analysis::WhatIf m = analysis::minimal_sync(source, &advice);
        w.drop.insert(m.drop.begin(), m.drop.end());
        w.add.insert(w.add.end(), m.add.begin(), m.add.end());
      }
      analysis::resolve_barrier_drops(source, w);
      edited = analysis::apply_edits(source, w);
    } catch (const analysis::WhatIfError& e) {
      return usage_error(e.what());
    }
    const analysis::Schedule s = replay->run(edited, w.scales, &w.drop);
    std::cout << fmt::format("  what-if:            {} ({} against the unchanged replay)\n", ms(s.step_ns),
                             pct(s.step_ns, unchanged.step_ns));
    for (size_t i = 0; i < run.size(); ++i)
      std::cout << fmt::format("    rank {}: {}\n", run[i].rank, ms(s.rank_step_ns[i]));
    // Spec text and trace names may hold anything: every line below is escaped.
    for (const std::string& line : w.lines) std::cout << "    given: " << trace::printable(line) << "\n";
    for (const std::string& n : rotation_notes) std::cout << "    buffers: " << trace::printable(n) << "\n";
    if (w.minimal_sync)
      for (const std::string& a : advice) std::cout << "    minimal sync: " << trace::printable(a) << "\n";
    // Does the edited run race where the captured one did not?
    analysis::AnalysisOptions ao;
    ao.backfill_timings = false;
    const auto before = analysis::analyze_records(run, ao);
    ao.skip_syncs = &w.drop;  // dropped legacy-stream barriers
    const auto after = analysis::analyze_records(edited, ao);
    uint64_t n_before = 0, n_after = 0;
    for (const auto& f : before.findings) n_before += f.occurrences;
    for (const auto& f : after.findings) n_after += f.occurrences;
    std::cout << fmt::format("  race check of the what-if: {} race occurrence(s), {} in the captured run\n",
                             n_after, n_before);
  }
  for (const std::string& n : replay->notes()) std::cout << "note: " << trace::printable(n) << "\n";
  return stdout_written("replay") ? kExitClean : kExitUsage;
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("replay",
                                 "Replay a traced run from its GPU times and predict the step time of a what-if");
  auto o = std::make_shared<ReplayCliOptions>();
  cmd->add_option("traces", o->traces, "Trace files, or folders of per-rank *.shz files")
      ->type_name("TRACE")
      ->required();
  cmd->add_option("--what-if", o->what_ifs,
                  "An edit (repeatable, all applied together), or @FILE of them: 'drop rank=R seq=S', "
                  "'drop kind=wait|event-sync|stream-sync|device-sync|legacy-barrier', 'add-wait rank=R after=S1 before=S2', "
                  "'scale stream=NAME|kernel=GLOB factor=F', 'minimal-sync', 'ipg-buffers N [name=GLOB]'")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  cmd->add_option("--step-range", o->step_range, "NVTX range that wraps one training step (without it, the run's repeating collectives and host synchronisations) ('|' separates names, a trailing '*' matches a prefix: 'step|ProfilerStep#*')")->capture_default_str();
  cmd->add_option("--host-gap-threshold-us", o->host_gap_us,
                  "An unexplained delay longer than this, with the GPU idle, is taken as host time")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  streamhaz replay traces/race-2gpu --what-if 'scale stream=\"reduction stream\" factor=1.4'\n"
      "  streamhaz replay traces/device-2gpu --what-if 'drop kind=device-sync'\n"
      "  streamhaz replay traces/event-2gpu --what-if 'ipg-buffers 3'\n"
      "  streamhaz check traces/serialize-2gpu --minimal-sync min.spec; streamhaz replay traces/serialize-2gpu "
      "--what-if @min.spec\n"
      "Exit status: 0, or 2 for a usage error or an unreadable trace.");
  cmd->callback([o, &exit_code] { exit_code = run_replay(*o); });
}

}  // namespace streamhaz::cli
