// analyze_shard(): the rounds of a sharded check. In each round every process runs its ranks
// until each waits for a collective or ends, then all processes swap the posts of the round;
// every process applies all of them, in process order, to its copy of the matcher. When no
// process moved in a round, every copy releases the pending collectives at once (the same
// standstill the one-process check releases at). A process whose copy found irregular input
// says so in the next round's message, and then every process stops with the same error.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include "analysis_parts.h"
#include "engine/rank_schedule.h"
#include "findings/timing_backfill.h"
#include "footprints/kernel_summary.h"
#include "shard/irregular_input.h"
#include "shard/wire.h"
#include "streamhaz/analysis/sharded.h"

namespace streamhaz::analysis {
namespace {

// This process's message of a round: irregular input its copy of the matcher found while
// applying the last round's posts, whether its ranks moved and how many are live, its posts, and
// the frontiers no rank here holds.
wire::Writer round_message(CollectiveMatcher& collectives, const Round& round,
                           const std::vector<std::string>& trace_files, const std::vector<int>& ranks) {
  wire::Writer w;
  w.u64(collectives.irregular());
  if (collectives.irregular()) {
    const Irregularity& what = collectives.first_irregularity();
    w.str(describe_irregularity(what, trace_files[what.index], ranks[what.index]));
  }
  w.u64(round.moved);
  w.u64(round.live);
  const std::vector<PostRecord> posts = collectives.take_outbox();
  w.u64(posts.size());
  for (const PostRecord& p : posts) w.post(p);
  const std::vector<uint64_t> unused = collectives.unused_frontiers();
  w.u64(unused.size());
  for (uint64_t id : unused) w.u64(id);
  return w;
}

// What the processes said in a round, read in process order; their posts are applied to this
// process's copy of the matcher on the way.
struct RoundNews {
  bool anyone_moved = false;
  uint64_t anyone_live = 0;
  std::string irregular;  // the lowest process's description: the same on every process
  // Frontiers every process reports: forgotten by all, so that a process's memory does not grow
  // with collectives times ranks.
  std::vector<uint64_t> unused_by_all;
};

RoundNews read_round(const std::vector<std::string>& messages, CollectiveMatcher& collectives, int me) {
  RoundNews news;
  std::vector<uint64_t> reported;
  bool first = true;
  int from = 0;
  for (const std::string& msg : messages) {
    wire::Reader r(msg);
    if (r.u64()) {
      std::string described = r.str();
      if (news.irregular.empty()) news.irregular = std::move(described);
    }
    news.anyone_moved |= r.u64() != 0;
    news.anyone_live += r.u64();
    const uint64_t n = r.u64();
    // Only this process's own posts are taken here: the others' must not keep a call open.
    for (uint64_t k = 0; k < n; ++k) collectives.apply(r.post(), from == me);
    ++from;
    reported.resize(r.u64());
    for (uint64_t& id : reported) id = r.u64();
    if (first) {
      news.unused_by_all = reported;
    } else {
      std::vector<uint64_t> both;
      std::set_intersection(news.unused_by_all.begin(), news.unused_by_all.end(), reported.begin(), reported.end(),
                            std::back_inserter(both));
      news.unused_by_all.swap(both);
    }
    first = false;
  }
  return news;
}

// This process's findings, trace summaries and counts, as they travel to process 0.
wire::Writer result_message(std::vector<RankRun>& runs) {
  FindingCollector mine;
  AnalysisResult counts;
  wire::Writer w;
  w.u64(runs.size());
  for (RankRun& run : runs) {
    count(*run.engine, counts);
    w.u64(run.engine->index());
    w.summary(summarise(*run.reader, *run.engine));
    mine.absorb(std::move(*run.findings));
  }
  const std::vector<Finding> found = mine.take();
  w.u64(found.size());
  for (const Finding& f : found) w.finding(f);
  w.u64(counts.operations_checked);
  w.u64(counts.operations_without_footprint);
  for (uint64_t k : counts.kernels_by_tier) w.u64(k);
  w.u64(counts.kernels_summary_unused);
  return w;
}

// Process 0: every process's results read into `result` (traces in the order of the files,
// their warnings, counts) and `findings`; the files by rank for the GPU times.
void merge_results(const std::vector<std::string>& messages, AnalysisResult& result, FindingCollector& findings,
                   std::map<int, std::string>& file_by_rank) {
  std::map<uint64_t, TraceSummary> by_index;
  for (const std::string& msg : messages) {
    wire::Reader r(msg);
    const uint64_t n = r.u64();
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t index = r.u64();
      by_index.emplace(index, r.summary());
    }
    std::vector<Finding> found(r.u64());
    for (Finding& f : found) f = r.finding();
    findings.absorb(std::move(found));
    result.operations_checked += r.u64();
    result.operations_without_footprint += r.u64();
    for (uint64_t& k : result.kernels_by_tier) k += r.u64();
    result.kernels_summary_unused += r.u64();
  }
  for (auto& [index, s] : by_index) {
    file_by_rank.emplace(s.rank, s.path);
    trace_warnings(s, result.warnings);
    result.traces.push_back(std::move(s));
  }
}

}  // namespace

AnalysisResult analyze_shard(const std::vector<std::string>& trace_files, const AnalysisOptions& options,
                             ShardExchange& exchange) {
  const int me = exchange.me(), processes = exchange.processes();
  std::optional<KernelSummaries> summaries;
  if (!options.kernels.empty()) summaries = KernelSummaries::load(options.kernels);

  // Every process numbers the ranks from all headers; it reads only its own files past them.
  std::vector<int> declared;
  for (const std::string& file : trace_files) declared.push_back(trace::TraceReader(file).rank());
  std::vector<std::string> numbering_warnings;
  const std::vector<int> ranks = number_ranks(trace_files, declared, numbering_warnings);

  CollectiveMatcher collectives(CollectiveMatcher::Clocks::Projected, /*replicated=*/true);
  collectives.set_ranks(static_cast<uint32_t>(trace_files.size()));
  std::vector<RankRun> runs;
  const EngineOptions engine = engine_options(options);
  for (size_t i = static_cast<size_t>(me); i < trace_files.size(); i += static_cast<size_t>(processes)) {
    RankRun run;
    run.reader = std::make_unique<trace::TraceReader>(trace_files[i]);
    run.findings = std::make_unique<FindingCollector>();
    run.engine = std::make_unique<RankEngine>(ranks[i], static_cast<uint32_t>(i), nullptr, collectives,
                                              *run.findings, engine);
    if (summaries) run.engine->use_kernel_summaries(&*summaries);
    runs.push_back(std::move(run));
  }

  trace::Record record;
  std::vector<uint32_t> woken;
  for (;;) {
    const Round round = run_round(runs, collectives, record);
    const wire::Writer mine = round_message(collectives, round, trace_files, ranks);
    const RoundNews news = read_round(exchange.all_gather(mine.bytes()), collectives, me);
    // Every process read the same messages: all stop here, before the copies can drift.
    if (!news.irregular.empty()) throw IrregularCollectives(news.irregular);
    collectives.forget_frontiers(news.unused_by_all);
    collectives.take_woken(woken);  // the rounds look at every rank anyway: do not let it grow
    if (news.anyone_live == 0) break;
    // Every live rank of every process waits for a collective some rank never issues.
    if (!news.anyone_moved) collectives.release_all();
  }
  collectives.take_woken();

  // Findings, summaries and counts travel to process 0, which builds the result.
  const std::vector<std::string> all = exchange.all_gather(result_message(runs).bytes());
  if (me != 0) return {};
  AnalysisResult result;
  result.warnings = numbering_warnings;
  FindingCollector merged;
  std::map<int, std::string> file_by_rank;
  merge_results(all, result, merged, file_by_rank);
  collective_warnings(collectives, result.warnings);
  result.findings = merged.take();
  summary_warnings(result, options, result.warnings);
  if (options.backfill_timings) backfill_timings(result.findings, file_by_rank);
  return result;
}

}  // namespace streamhaz::analysis
