// analyze(): opens every rank's trace and drives the rank engines, so that a collective's
// cross-rank edge is known before anything after it is checked. A rank runs until it issues a
// collective the other ranks have not reached; meanwhile other ranks run, on one thread in
// turn (rank_schedule.cpp) or on several at once.
#include "streamhaz/analysis/analyze.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "analysis_parts.h"
#include "engine/rank_engine.h"
#include "engine/rank_schedule.h"
#include "findings/timing_backfill.h"
#include "footprints/kernel_summary.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {
namespace {

// Everything one pass over the ranks needs; built afresh for a rerun.
struct Pass {
  std::unique_ptr<TimelineRegistry> dense_timelines;  // dense reference mode only
  std::unique_ptr<CollectiveMatcher> collectives;
  std::vector<RankRun> runs;
};

CollectiveMatcher::Clocks clocks_of(const AnalysisOptions& o) {
  return o.dense_clocks ? CollectiveMatcher::Clocks::Dense : CollectiveMatcher::Clocks::Projected;
}

void add_engines(Pass& pass, const std::vector<int>& ranks, const AnalysisOptions& options,
                 const EngineOptions& engine_options, const KernelSummaries* summaries) {
  pass.collectives = std::make_unique<CollectiveMatcher>(clocks_of(options));
  pass.collectives->set_ranks(static_cast<uint32_t>(pass.runs.size()));
  // The over-synchronisation pass collects conflicts as they are found: a pass run again
  // after a wrong guess would report some twice.
  const bool ahead = !options.on_conflict && pass.runs.size() >= options.run_ahead_from_ranks;
  pass.collectives->set_run_ahead(ahead ? options.run_ahead : 0);
  if (options.dense_clocks) pass.dense_timelines = std::make_unique<TimelineRegistry>();
  for (size_t i = 0; i < pass.runs.size(); ++i) {
    RankRun& run = pass.runs[i];
    run.findings = std::make_unique<FindingCollector>();
    run.engine = std::make_unique<RankEngine>(ranks[i], static_cast<uint32_t>(i), pass.dense_timelines.get(),
                                              *pass.collectives, *run.findings, engine_options);
    if (summaries) run.engine->use_kernel_summaries(summaries);
  }
}

// Runs the pass, and again (`rebuild` makes a fresh pass): without running ahead when a rank
// ran ahead of a collective that did bring it order, and on one thread when the outcome could
// depend on the order ranks ran in (so every --jobs gives the one-thread result).
// A thread the system refused is said once in `warnings`; the pass runs on those that started.
void execute(Pass& pass, const AnalysisOptions& options, const std::function<Pass()>& rebuild,
             std::vector<std::string>& warnings) {
  unsigned threads = worker_threads(options, pass.runs.size());
  bool in_turn = threads <= 1;
  bool ahead = true;
  for (;;) {
    if (!ahead) pass.collectives->set_run_ahead(0);
    if (in_turn) {
      run_in_turn(pass.runs, *pass.collectives);
    } else if (const ThreadsStarted started = run_in_parallel(pass.runs, *pass.collectives, threads);
               started.threads < threads) {
      warnings.push_back(fmt::format("could start only {} of the {} threads asked for (--jobs): {}; the ranks "
                                     "were checked on {}",
                                     started.threads, threads, started.refused, started.threads));
      threads = started.threads;  // a rerun asks for no more
    }
    if (pass.collectives->speculation_failed()) ahead = false;
    else if (!in_turn && pass.collectives->irregular()) in_turn = true;
    else return;
    pass = rebuild();
  }
}

// Findings in rank order, warnings about collectives: shared by both entry points.
void finish(Pass& pass, AnalysisResult& result) {
  FindingCollector all;
  for (RankRun& run : pass.runs) {
    count(*run.engine, result);
    all.absorb(std::move(*run.findings));
  }
  collective_warnings(*pass.collectives, result.warnings);
  result.findings = all.take();
}

}  // namespace

EngineOptions engine_options(const AnalysisOptions& o) {
  EngineOptions e;
  e.per_thread_host = o.per_thread_host;
  e.local_order = o.local_order;
  e.keep_all_readers = o.keep_all_readers;
  e.phantom_run = o.phantoms != nullptr;
  e.skip_syncs = o.skip_syncs;
  e.phantom_ops = o.phantom_ops;
  e.lasting_phantom_ops = o.lasting_phantom_ops;
  e.sync_sites = o.sync_sites;
  e.order_checks = o.order_checks;
  e.on_conflict = o.on_conflict;
  e.race_findings = o.race_findings;
  e.on_ordered_by_sites = o.on_ordered_by_sites;
  e.on_phantom_ordered_by_sites = o.on_phantom_ordered_by_sites;
  e.on_idle_query = o.on_idle_query;
  e.skip_idle_queries = o.skip_idle_queries;
  return e;
}

// Findings, GPU times and reports must never mix two files up (analysis_parts.h).
std::vector<int> number_ranks(const std::vector<std::string>& files, const std::vector<int>& declared_ranks,
                              std::vector<std::string>& warnings) {
  std::set<int> declared;
  for (int r : declared_ranks)
    if (r >= 0) declared.insert(r);
  std::set<int> taken;
  std::vector<int> out;
  int next_free = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    int rank = declared_ranks[i];
    if (rank < 0 || taken.count(rank)) {
      while (declared.count(next_free) || taken.count(next_free)) ++next_free;
      if (rank >= 0)
        warnings.push_back(
            fmt::format("{}: rank {} appears in more than one trace; analysed as rank {}", files[i], rank, next_free));
      rank = next_free;
    }
    taken.insert(rank);
    out.push_back(rank);
  }
  return out;
}

TraceSummary summarise(const trace::TraceReader& r, const RankEngine& engine) {
  TraceSummary s;
  s.path = r.path();
  s.rank = engine.rank();
  s.records = r.records_read();
  s.operations = engine.operations();
  s.truncated = r.truncated();
  s.truncation = r.truncation();
  s.unobserved = r.unobserved();
  s.records_lost = r.records_lost();
  s.strings_cut_note = r.strings_cut_note();
  if (auto d = r.header().find("dropped_records"); d != r.header().end() && d->is_number_unsigned())
    s.dropped_records = d->get<uint64_t>();
  if (auto f = r.header().find("footprints"); f != r.header().end() && *f == "exact")
    s.exact_tier_pointer_only = engine.kernels_by_tier()[static_cast<size_t>(trace::FootprintTier::Pointer)];
  return s;
}

void trace_warnings(const TraceSummary& s, std::vector<std::string>& warnings) {
  if (s.truncated && s.unobserved)
    warnings.push_back(fmt::format("trace of a run observed only in part, analysed as far as it goes ({} operations): {}",
                                   s.operations, s.truncation));
  else if (s.truncated)
    warnings.push_back(fmt::format("truncated trace analysed up to its last whole chunk ({} operations; {}what "
                                   "the process did after its last flush is not in the file): {}",
                                   s.operations,
                                   s.records_lost ? fmt::format("{} records of a cut-off chunk lost, and ",
                                                                s.records_lost)
                                                  : "",
                                   s.truncation));
  if (!s.strings_cut_note.empty()) warnings.push_back(s.strings_cut_note);
  if (s.dropped_records)
    warnings.push_back(fmt::format("{}: the tracer dropped {} records it could not make (out of memory); "
                                   "operations among them were not checked",
                                   s.path, s.dropped_records));
  if (s.exact_tier_pointer_only)
    warnings.push_back(fmt::format(
        "{}: {} kernel launch(es) of this exact-tier trace have only pointer-tier footprints (launches the "
        "steady phase ran bare because the launch memo did not know them, CUDA graph nodes, launches into a stream "
        "capture, or launches whose instrumentation reported nothing, such as TMA copies): they are checked by "
        "their pointer arguments alone (docs/footprints.md, \"How strong pointer evidence is\"); `streamhaz run "
        "--footprints exact --exact-launches every` instruments every launch but graph nodes",
        s.path, s.exact_tier_pointer_only));
}

void collective_warnings(const CollectiveMatcher& c, std::vector<std::string>& warnings) {
  if (c.partial())
    warnings.push_back(fmt::format(
        "{} NCCL collective(s) were not reached by all their ranks in the traces given; their cross-rank "
        "ordering was left out (races through them may be reported)",
        c.partial()));
  if (c.mismatched())
    warnings.push_back(fmt::format(
        "{} NCCL collective(s) differ between ranks at the same communicator sequence number; no cross-rank "
        "ordering was assumed for them",
        c.mismatched()));
}

void summary_warnings(const AnalysisResult& r, const AnalysisOptions& options, std::vector<std::string>& warnings) {
  if (r.kernels_summary_unused)
    warnings.push_back(fmt::format(
        "{} launch(es) of kernels summarised in {} could not use their summary: the trace kept no argument "
        "bytes (trace with `streamhaz run --footprints static`) or they did not fit the summary's layout",
        r.kernels_summary_unused, options.kernels));
}

void count(const RankEngine& engine, AnalysisResult& result) {
  result.operations_checked += engine.operations();
  result.operations_without_footprint += engine.operations_without_footprint();
  for (size_t t = 0; t < result.kernels_by_tier.size(); ++t) result.kernels_by_tier[t] += engine.kernels_by_tier()[t];
  result.kernels_summary_unused += engine.kernels_summary_unused();
}


AnalysisResult analyze(const std::vector<std::string>& trace_files, const AnalysisOptions& options) {
  AnalysisResult result;
  // A bad kernels.json is bad input, like a bad trace: one error, before any work.
  std::optional<KernelSummaries> summaries;
  if (!options.kernels.empty()) summaries = KernelSummaries::load(options.kernels);

  std::vector<int> ranks;
  const EngineOptions engine = engine_options(options);
  auto build = [&]() {
    Pass pass;
    for (size_t i = 0; i < trace_files.size(); ++i) {
      RankRun run;
      run.reader = std::make_unique<trace::TraceReader>(trace_files[i]);
      if (options.observe_records) run.observer = options.observe_records(i);
      pass.runs.push_back(std::move(run));
    }
    if (ranks.empty() && !pass.runs.empty()) {
      std::vector<int> declared;
      for (const RankRun& run : pass.runs) declared.push_back(run.reader->rank());
      ranks = number_ranks(trace_files, declared, result.warnings);
    }
    add_engines(pass, ranks, options, engine, summaries ? &*summaries : nullptr);
    return pass;
  };
  Pass pass = build();
  execute(pass, options, build, result.warnings);

  std::map<int, std::string> file_by_rank;
  for (const RankRun& run : pass.runs) {
    file_by_rank.emplace(run.engine->rank(), run.reader->path());
    result.traces.push_back(summarise(*run.reader, *run.engine));
    trace_warnings(result.traces.back(), result.warnings);
  }
  finish(pass, result);
  summary_warnings(result, options, result.warnings);
  if (options.backfill_timings) backfill_timings(result.findings, file_by_rank);
  return result;
}

AnalysisResult analyze_records(const std::vector<RankRecords>& ranks, const AnalysisOptions& options) {
  AnalysisResult result;
  std::optional<KernelSummaries> summaries;
  if (!options.kernels.empty()) summaries = KernelSummaries::load(options.kernels);
  std::vector<int> numbers;
  for (const RankRecords& r : ranks) numbers.push_back(r.rank);
  const EngineOptions engine = engine_options(options);
  auto build = [&]() {
    Pass pass;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const RankRecords& r = ranks[i];
      RankRun run;
      run.memory = &r;
      if (options.skip_syncs) run.skip.emplace(*options.skip_syncs, r.rank);
      if (options.inserts && i < options.inserts->size()) run.inserts = &(*options.inserts)[i];
      if (options.phantoms && i < options.phantoms->size()) run.phantoms = &(*options.phantoms)[i];
      pass.runs.push_back(std::move(run));
    }
    add_engines(pass, numbers, options, engine, summaries ? &*summaries : nullptr);
    return pass;
  };
  Pass pass = build();
  execute(pass, options, build, result.warnings);
  for (const RankRun& run : pass.runs) {
    TraceSummary s;
    s.path = run.memory->path;
    s.rank = run.engine->rank();
    s.records = run.memory->records.size();
    s.operations = run.engine->operations();
    result.traces.push_back(std::move(s));
  }
  finish(pass, result);
  return result;
}

}  // namespace streamhaz::analysis
