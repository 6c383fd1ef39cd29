// analyze(): opens every rank's trace and drives the rank engines in lockstep, so that a
// collective's cross-rank edge is known before anything after it is checked. A rank runs
// until it issues a collective the other ranks have not reached, then the next rank runs.
#include "streamhaz/analysis/analyze.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <memory>
#include <set>

#include "engine/rank_engine.h"
#include "footprints/kernel_summary.h"
#include "findings/timing_backfill.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {
namespace {

// One rank's input: a trace file being read, or records held in memory.
struct RankRun {
  std::unique_ptr<trace::TraceReader> reader;
  const RankRecords* memory = nullptr;
  size_t next_record = 0;
  std::unique_ptr<RankEngine> engine;
  bool done = false;

  // The next record, or null at the end; in-memory records are not copied.
  const trace::Record* next(trace::Record& buffer) {
    if (reader) return reader->next(buffer) ? &buffer : nullptr;
    while (next_record < memory->records.size()) {
      const trace::Record& r = memory->records[next_record++];
      if (!skip || !skipped(r)) return &r;
    }
    return nullptr;
  }
  const std::set<std::pair<int, uint64_t>>* skip = nullptr;
  bool skipped(const trace::Record& r) const {
    uint64_t seq = 0;
    if (const auto* w = std::get_if<trace::EventWait>(&r)) seq = w->seq;
    else if (const auto* e = std::get_if<trace::EventSync>(&r)) seq = e->seq;
    else if (const auto* s = std::get_if<trace::StreamSync>(&r)) seq = s->seq;
    else if (const auto* d = std::get_if<trace::DeviceSync>(&r)) seq = d->seq;
    return seq && skip->count({memory->rank, seq});
  }
};

// Runs every rank to its end; returns when all are done.
void run_lockstep(std::vector<RankRun>& runs, CollectiveMatcher& collectives) {
  trace::Record record;
  size_t live = runs.size();
  while (live) {
    bool moved = false;
    for (RankRun& run : runs) {
      if (run.done) continue;
      RankEngine& engine = *run.engine;
      if (engine.blocked()) {
        if (!collectives.ready(engine.blocked_on())) continue;
        engine.resume();
      }
      while (!engine.blocked()) {
        const trace::Record* r = run.next(record);
        if (!r) {
          engine.finish();
          run.done = true;
          --live;
          break;
        }
        engine.apply(*r);
      }
      moved = true;
    }
    // Every live rank waits for a collective some rank never issues (missing or cut-off
    // trace, ranks disagreeing on the order): give up those edges rather than stop.
    if (!moved) collectives.release_all();
  }
}

}  // namespace

AnalysisResult analyze(const std::vector<std::string>& trace_files, const AnalysisOptions& options) {
  TimelineRegistry timelines;
  CollectiveMatcher collectives;
  FindingCollector findings;
  std::vector<RankRun> runs;
  std::map<int, std::string> file_by_rank;
  AnalysisResult result;

  // A bad kernels.json is bad input, like a bad trace: one error, before any work.
  std::optional<KernelSummaries> summaries;
  if (!options.kernels.empty()) summaries = KernelSummaries::load(options.kernels);

  for (const std::string& file : trace_files) {
    RankRun run;
    run.reader = std::make_unique<trace::TraceReader>(file);
    runs.push_back(std::move(run));
  }
  // A trace without a rank, or repeating one, gets the lowest number no trace declares and
  // none has taken, so that findings, GPU times and reports never mix two files up.
  std::set<int> declared;
  for (const RankRun& run : runs)
    if (run.reader->rank() >= 0) declared.insert(run.reader->rank());
  int next_free = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    int rank = runs[i].reader->rank();
    if (rank < 0 || file_by_rank.count(rank)) {
      while (declared.count(next_free) || file_by_rank.count(next_free)) ++next_free;
      if (rank >= 0)
        result.warnings.push_back(fmt::format("{}: rank {} appears in more than one trace; analysed as rank {}",
                                              trace_files[i], rank, next_free));
      rank = next_free;
    }
    file_by_rank.emplace(rank, trace_files[i]);
    runs[i].engine = std::make_unique<RankEngine>(rank, timelines, collectives, findings, options);
    if (summaries) runs[i].engine->use_kernel_summaries(&*summaries);
  }

  run_lockstep(runs, collectives);

  for (const RankRun& run : runs) {
    const trace::TraceReader& r = *run.reader;
    TraceSummary s;
    s.path = r.path();
    s.rank = run.engine->rank();
    s.records = r.records_read();
    s.operations = run.engine->operations();
    s.truncated = r.truncated();
    s.truncation = r.truncation();
    s.records_lost = r.records_lost();
    if (auto d = r.header().find("dropped_records"); d != r.header().end() && d->is_number_unsigned())
      s.dropped_records = d->get<uint64_t>();
    if (s.truncated)
      result.warnings.push_back(fmt::format("truncated trace analysed up to its last whole chunk ({} operations; {}what "
                                            "the process did after its last flush is not in the file): {}",
                                            s.operations,
                                            s.records_lost ? fmt::format("{} records of a cut-off chunk lost, and ",
                                                                         s.records_lost)
                                                           : "",
                                            s.truncation));
    if (s.dropped_records)
      result.warnings.push_back(fmt::format("{}: the tracer dropped {} records it could not make (out of memory); "
                                            "operations among them were not checked",
                                            s.path, s.dropped_records));
    result.operations_checked += run.engine->operations();
    result.operations_without_footprint += run.engine->operations_without_footprint();
    for (size_t t = 0; t < result.kernels_by_tier.size(); ++t) result.kernels_by_tier[t] += run.engine->kernels_by_tier()[t];
    result.kernels_summary_unused += run.engine->kernels_summary_unused();
    result.traces.push_back(std::move(s));
  }
  if (collectives.partial())
    result.warnings.push_back(fmt::format(
        "{} NCCL collective(s) were not reached by all their ranks in the traces given; their cross-rank "
        "ordering was left out (races through them may be reported)",
        collectives.partial()));
  if (collectives.mismatched())
    result.warnings.push_back(fmt::format(
        "{} NCCL collective(s) differ between ranks at the same communicator sequence number; no cross-rank "
        "ordering was assumed for them",
        collectives.mismatched()));

  if (result.kernels_summary_unused)
    result.warnings.push_back(fmt::format(
        "{} launch(es) of kernels summarised in {} could not use their summary: the trace kept no argument "
        "bytes (trace with `streamhaz run --footprints static`) or they did not fit the summary's layout",
        result.kernels_summary_unused, options.kernels));
  result.findings = findings.take();
  if (options.backfill_timings) backfill_timings(result.findings, file_by_rank);
  return result;
}

AnalysisResult analyze_records(const std::vector<RankRecords>& ranks, const AnalysisOptions& options) {
  TimelineRegistry timelines;
  CollectiveMatcher collectives;
  FindingCollector findings;
  std::vector<RankRun> runs;
  AnalysisResult result;
  for (const RankRecords& r : ranks) {
    RankRun run;
    run.memory = &r;
    run.skip = options.skip_syncs;
    run.engine = std::make_unique<RankEngine>(r.rank, timelines, collectives, findings, options);
    runs.push_back(std::move(run));
  }
  run_lockstep(runs, collectives);
  for (const RankRun& run : runs) {
    TraceSummary s;
    s.path = run.memory->path;
    s.rank = run.engine->rank();
    s.records = run.memory->records.size();
    s.operations = run.engine->operations();
    result.operations_checked += run.engine->operations();
    result.operations_without_footprint += run.engine->operations_without_footprint();
    result.traces.push_back(std::move(s));
  }
  result.findings = findings.take();
  return result;
}

}  // namespace streamhaz::analysis
