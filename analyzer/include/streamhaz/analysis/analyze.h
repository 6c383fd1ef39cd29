// The analysis entry point: trace files in, findings out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/analysis/sync_site_ids.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// Sees every record of one trace as analyze() reads it, in order: what another pass needs of a
// trace is learned from the race check's read instead of a read of its own.
class RecordObserver {
 public:
  virtual ~RecordObserver() = default;
  virtual void on_record(const trace::Record& r) = 0;
};

// A record applied before position `before` of a rank's records (their size: after the last), as
// if written there: an edit of a run in memory that needs no copy of it (replay.h, edit_inserts).
struct RecordInsert {
  size_t before = 0;
  trace::Record record;
  // It follows the operation before `before` (an event recorded after it) rather than preceding
  // the record at `before` (a wait for it): a reading with phantoms puts its fences between.
  bool after_previous = false;
};
using RecordInserts = std::vector<RecordInsert>;  // by `before`, then in the order applied

// The run with phantoms, read in place (the over-synchronisation pass, docs/sync-and-replay.md,
// "How verdicts are computed"): every kernel without a footprint of its own (no access, or only
// accesses of unknown extent: pointer-tier ones) is followed by an access of all memory, and its
// accesses of unknown extent are left out; fences, kernels that stand for work outside the judged
// window, each with its access of all memory, come before the records named here.
struct PhantomFence {
  size_t before = 0;  // the rank's records.size(): after the last
  trace::StreamId stream = 0;
  uint64_t seq = 0;
};
using PhantomFences = std::vector<PhantomFence>;  // by `before`, then in the order applied

struct AnalysisOptions {
  // By default all host threads of a process form one timeline in observed API order;
  // strict mode gives each host thread its own clock (docs/analysis.md, "Timelines and clocks").
  bool per_thread_host = false;
  // kernels.json from `streamhaz kernels scan` (the static footprint tier), "" for none. Its
  // summaries apply to launches whose trace kept the argument bytes (`run --footprints static`).
  std::string kernels;
  // Called for every unordered conflicting pair as it is found (before folding): the
  // over-synchronisation pass re-checks edited traces and needs the pairs one by one.
  std::function<void(int rank, uint64_t first_seq, uint64_t second_seq, uint64_t first_byte)> on_conflict;
  // False: unordered pairs go to `on_conflict` alone and no race finding is made of them (the
  // over-synchronisation pass's checks, which read pairs and never findings).
  bool race_findings = true;
  // Look up the GPU intervals of the findings' operations afterwards (rereads the files).
  bool backfill_timings = true;
  // Threads that check ranks at once: 1 (the default) runs them in turn, 0 uses every core.
  // Findings and their order do not depend on it. Ignored (one thread) with the per-pair
  // callbacks below, unless `callbacks_by_rank` and `local_order` both hold.
  unsigned jobs = 1;
  // The reference representation of cross-rank order: every clock spans every timeline of
  // every rank (O(ranks) per join). The default projects other ranks onto collective
  // frontiers (docs/analysis.md, "Cross-rank order"); both give the same findings.
  bool dense_clocks = false;
  // How many collectives in a row a rank may take before every rank has reached them, when
  // they cannot bring it order its stream lacks (checked as they resolve; a wrong guess runs
  // the pass again without). Lets each rank of a large job run a stretch with its state in the
  // caches instead of all ranks taking turns at every collective. 0: off. Findings do not
  // depend on it, except that it can resolve calls issued in crossing orders on unordered
  // streams, which ranks waiting as a whole give up (docs/analysis.md, "Running ahead of
  // collectives"). Off with `on_conflict`.
  unsigned run_ahead = 16;
  // ...from this many ranks on: with fewer, every rank's state stays in the caches between
  // turns and running ahead only costs instructions (about 1 % more at 2 ranks).
  unsigned run_ahead_from_ranks = 16;
  // analyze_records only: synchronisation records (event waits, syncs and queries) to leave out,
  // by (rank, seq), so that re-checks without one need no copy of the run. A legacy-stream
  // operation named here keeps its stream order but loses its implicit barrier with the
  // blocking streams (the over-synchronisation pass judges those barriers too).
  const std::set<std::pair<int, uint64_t>>* skip_syncs = nullptr;
  // analyze_records only: per rank (as `ranks`), records applied among the rank's own (added
  // waits), so that a check of an edited run needs no edited copy of it.
  const std::vector<RecordInserts>* inserts = nullptr;
  // analyze_records only: read every rank as the run with phantoms, with these fences per rank
  // (as `ranks`), so that the pass's second variant needs no copy of the run.
  const std::vector<PhantomFences>* phantoms = nullptr;

  // analyze_records only, for the over-synchronisation pass (docs/sync-and-replay.md, "How
  // verdicts are computed"). Each rank's own order alone: collectives carry no order between
  // ranks, so that a synchronisation is judged by what its rank needs of it.
  bool local_order = false;
  // Shadow memory keeps every read since the last write, where it would forget a read ordered
  // before a later one: which pairs are checked then does not depend on the order, so that
  // checks of a run with and without a synchronisation compare the same pairs.
  bool keep_all_readers = false;
  // Kernels (rank, seq) whose accesses stand for an unknown footprint: each conflicts with every
  // earlier and later access of the bytes it covers, as a write would, but hides nothing
  // (ShadowCell::phantoms). The pass's kernels without footprint and its fences; the fences are
  // lasting ones, which later phantoms of their stream do not replace.
  const std::set<std::pair<int, uint64_t>>* phantom_ops = nullptr;
  const std::set<std::pair<int, uint64_t>>* lasting_phantom_ops = nullptr;
  // Synchronisation sites whose edges the check traces through the run, by (rank, seq) of each
  // instance (an event wait, a host synchronisation, a legacy-stream operation's barrier); and
  // the callback for every conflicting pair that is ordered, but only through some of them:
  // `sites` lists each site (and group) without which the pair would be unordered.
  const std::map<std::pair<int, uint64_t>, SyncSiteIds>* sync_sites = nullptr;
  std::function<void(int rank, uint64_t first_seq, uint64_t second_seq, uint64_t first_byte,
                     std::span<const uint32_t> sites)>
      on_ordered_by_sites;
  // Of the pairs whose earlier operation is a phantom, on_ordered_by_sites gets the latest
  // phantom of each timeline before an operation (its sites include every earlier one's); each
  // earlier phantom ordered only through sites comes here instead, once per later operation, so
  // that the kernels without footprint a site orders can be counted.
  std::function<void(int rank, uint64_t phantom_seq, std::span<const uint32_t> sites)> on_phantom_ordered_by_sites;
  // Called for every successful event or stream query whose event or stream the host had
  // already waited for: it observes nothing the host did not know, and its success says only
  // that the host waited (the pass leaves such queries out of every check: without the wait
  // that made them succeed they would have failed).
  std::function<void(int rank, uint64_t seq)> on_idle_query;
  // Leave such queries out as they come (each still goes to on_idle_query): one check finds them
  // and runs without them, where `skip_syncs` needs them found by a check before.
  bool skip_idle_queries = false;
  // The callbacks above (on_conflict, on_ordered_by_sites, on_phantom_ordered_by_sites,
  // on_idle_query) may be called at once for different ranks, from different threads, never at
  // once for one rank: the caller keeps what they collect by rank. With `local_order` as well
  // (no rank waits for another, so the check never runs twice), `jobs` then holds.
  bool callbacks_by_rank = false;
  // Only these pairs (rank, earlier seq, later seq) are checked, for order alone: each one the
  // run leaves unordered goes to on_conflict (first byte 0); no footprint is looked at. How the
  // pass holds a replacement of a synchronisation to the pairs it must keep ordered. Sorted.
  const std::vector<std::tuple<int, uint64_t, uint64_t>>* order_checks = nullptr;
  // analyze() only: the observer of the file at `file_index` (or null), asked for as a pass over
  // the files starts, and again when the pass is run again (it must then start afresh). One file's
  // records come in order, from one thread at a time (not always the same one); different files'
  // observers may be called at once, from different threads (`jobs`).
  std::function<RecordObserver*(size_t file_index)> observe_records;
};

// One rank's records held in memory (an edited copy of a trace).
struct RankRecords {
  int rank = 0;
  std::string path;  // where the records came from, for reports
  std::vector<trace::Record> records;
  bool truncated = false;  // the trace was cut off: what the process did last is not here
  // Training steps found from the repeating pattern of collectives and host synchronisations
  // (for a trace without a step range): the index in `records` each starts at, and where the
  // last one ends. Empty where no pattern was found (or not looked for).
  std::vector<uint64_t> pattern_step_starts;
  uint64_t pattern_steps_end = 0;
  size_t pattern_period = 0;  // calls per step
};

// Memory ran out (std::bad_alloc: a process limit such as `ulimit -v`, or a trace far beyond
// this machine) while `doing` ("checking", "reading") a trace: which file, at which record.
class OutOfMemory : public std::runtime_error {
 public:
  OutOfMemory(const std::string& doing, const std::string& file, uint64_t record)
      : std::runtime_error("out of memory while " + doing + " " + file + " at record " + std::to_string(record)) {}
};

// Reads every file (one per rank, any order) and runs the happens-before race check.
// Throws trace::TraceError for unreadable or corrupt input, OutOfMemory when memory runs out;
// truncated files are analysed up to their last whole chunk and noted in
// AnalysisResult::warnings and ::traces.
AnalysisResult analyze(const std::vector<std::string>& trace_files, const AnalysisOptions& options = {});
// The same check over records already in memory (ranks as given; no timing backfill).
AnalysisResult analyze_records(const std::vector<RankRecords>& ranks, const AnalysisOptions& options = {});

}  // namespace streamhaz::analysis
