// Running the rank engines: each rank applies its records until it issues a collective the
// other ranks have not reached (and cannot run ahead of), then waits. In turn on one thread (the reference order), or on
// several threads that take whichever ranks can move. Findings go to per-rank collectors and
// collectives resolve the same whatever the order, so both give the same result; input where
// the order could matter is flagged by the matcher (CollectiveMatcher::irregular).
#pragma once

#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/collective_matcher.h"
#include "engine/rank_engine.h"
#include "model/rank_seqs.h"
#include "findings/finding_collector.h"
#include "streamhaz/analysis/analyze.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

// One rank's input: a trace file being read, or records held in memory.
struct RankRun {
  std::unique_ptr<trace::TraceReader> reader;
  const RankRecords* memory = nullptr;
  std::optional<RankSeqs> skip;                               // syncs left out (memory only)
  const RecordInserts* inserts = nullptr;                      // records added (memory only)
  size_t next_insert = 0;
  const PhantomFences* phantoms = nullptr;  // read as the run with phantoms (memory only)
  // Where a reading with phantoms stands: before each record of the rank, in this order, the
  // phantom of the kernel it closes, the inserts that follow that kernel, the fences, the inserts
  // that precede the record (the order a copy of the run with phantoms, edited, would have).
  struct PhantomReading {
    enum class Step : uint8_t { Close, After, Fence, FenceAccess, Before, Record };
    Step step = Step::Close;
    uint64_t kernel = 0;  // whose accesses come now
    bool footprint = false, unknown_extent = false;
    size_t next_fence = 0;
    trace::Record made;  // the phantom access or fence kernel last handed out
  } phantom_reading;
  RecordObserver* observer = nullptr;                         // sees what `reader` reads
  size_t next_record = 0;
  std::unique_ptr<FindingCollector> findings;
  std::unique_ptr<RankEngine> engine;
  bool done = false;

  // The next record, or null at the end; in-memory records are not copied. Inline, with
  // run_until_blocked: this is the loop every record goes through.
  const trace::Record* next(trace::Record& buffer) {
    if (reader) {
      if (!reader->next(buffer)) return nullptr;
      if (observer) observer->on_record(buffer);
      return &buffer;
    }
    if (phantoms) return next_with_phantoms();
    for (;;) {
      if (inserts && next_insert < inserts->size() && (*inserts)[next_insert].before <= next_record)
        return &(*inserts)[next_insert++].record;
      if (next_record >= memory->records.size()) return nullptr;
      const trace::Record& r = memory->records[next_record++];
      if (!skip || !skipped(r)) return &r;
    }
  }
  // Whether `r` is a record the reading with phantoms made (a phantom access or a fence kernel).
  bool made_by_reading(const trace::Record* r) const { return r == &phantom_reading.made; }
  // The rank's hot state toward the caches, ahead of its turn (RankEngine::prefetch).
  void prefetch() const {
    engine->prefetch();
    if (reader) RankEngine::prefetch_bytes(reader.get(), sizeof(trace::TraceReader));
  }
  // Applies records until the rank waits for a collective or ends (then finishes it). Memory
  // running out says which trace and record it happened at (OutOfMemory).
  void run_until_blocked(trace::Record& buffer) {
    RankEngine& e = *engine;
    try {
      while (!e.blocked()) {
        const trace::Record* r = next(buffer);
        if (!r) {
          e.finish();
          done = true;
          return;
        }
        e.apply(*r);
      }
    } catch (const std::bad_alloc&) {
      out_of_memory();
    }
  }

 private:
  bool skipped(const trace::Record& r) const;  // a synchronisation left out (memory only)
  const trace::Record* next_with_phantoms();    // engine/phantom_reading.cpp
  [[noreturn]] void out_of_memory() const;
};

// From this many ranks on, their states no longer stay in a core's caches between turns (a
// rank's turn touches some tens of KB; an L2 holds 1 to 4 MB): below it, prefetching ahead of
// each turn (RankRun::prefetch) only costs instructions.
inline constexpr size_t kPrefetchFromRanks = 16;

// How many threads a pass uses: AnalysisOptions::jobs (0: every core, from the rank count at
// which ranks run ahead of collectives on; one below it), at most one per rank.
unsigned worker_threads(const AnalysisOptions& options, size_t ranks);

// One round in turn on this thread: every rank not done runs until it waits for a collective or
// ends, a rank whose collective is not ready yet is passed over. The one-process check and the
// sharded one (analyze_shard) take their rounds alike.
struct Round {
  bool moved = false;  // some rank applied records
  size_t live = 0;     // ranks not done after the round
};
Round run_round(std::vector<RankRun>& runs, CollectiveMatcher& collectives, trace::Record& record);
// Every rank to its end, in turn on this thread.
void run_in_turn(std::vector<RankRun>& runs, CollectiveMatcher& collectives);
// How many threads a parallel pass ran on: fewer than asked when the system refused one
// (`refused` says why), the rest of the pass running on those that started.
struct ThreadsStarted {
  unsigned threads = 1;
  std::string refused;
};
// The same on `threads` threads.
ThreadsStarted run_in_parallel(std::vector<RankRun>& runs, CollectiveMatcher& collectives, unsigned threads);

}  // namespace streamhaz::analysis
