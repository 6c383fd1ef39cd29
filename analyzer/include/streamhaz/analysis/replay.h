// Replay: a discrete-event simulation of a traced run. It is fitted to the trace's own GPU
// times (durations, launch delays, host gaps between API calls) and then re-run on an edited
// copy of the trace (what-ifs: a wait dropped or added, a stream slowed down) to predict the
// step time. docs/sync-and-replay.md states the model.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/seq_table.h"

namespace streamhaz::analysis {

// Reads every trace (one per rank) into memory, at most `max_records` records each; `cut`
// is set when a trace had more. Ranks are numbered as analyze() numbers them. `warnings` gets
// what check would say about reading them (truncated traces, names cut). Throws
// trace::TraceError for bad input, OutOfMemory when the records do not fit.
std::vector<RankRecords> load_run(const std::vector<std::string>& trace_files, uint64_t max_records = UINT64_MAX,
                                  bool* cut = nullptr, std::vector<std::string>* warnings = nullptr);

// --- what-ifs ----------------------------------------------------------------------------

// An event recorded on the stream of operation `after_seq` right after it, waited on by the
// stream of operation `before_seq` right before it (both on rank `rank`).
struct AddedWait {
  int rank = 0;
  uint64_t after_seq = 0;
  uint64_t before_seq = 0;
  bool operator<(const AddedWait& o) const {
    return std::tie(rank, after_seq, before_seq) < std::tie(o.rank, o.after_seq, o.before_seq);
  }
  bool operator==(const AddedWait&) const = default;
};

// Multiplies the durations of the operations on streams named `stream` and/or of kernels
// named `kernel` (globs with `*` and `?`; empty: any).
struct DurationScale {
  std::string stream;
  std::string kernel;
  double factor = 1;
};

// Changes how many buffers a run's rotating buffers (the IPG double buffer) number: every
// fill-and-drain of one goes to buffer (its number in the run) mod `buffers`. `name`: a glob
// picking the buffers by name; empty: found from the allocations alone.
struct BufferRotation {
  int buffers = 0;
  std::string name;
};

// The synchronisations a what-if can drop and the over-synchronisation pass judges, one row each:
// enumerator, the name specs and keys use, whether it blocks the host. A legacy barrier is not a
// record of its own but the implicit one of an operation on the legacy default stream.
#define STREAMHAZ_SYNC_KINDS(X)               \
  X(Wait, "wait", false)                      \
  X(EventSync, "event-sync", true)            \
  X(StreamSync, "stream-sync", true)          \
  X(DeviceSync, "device-sync", true)          \
  X(LegacyBarrier, "legacy-barrier", false)

enum class SyncKind : uint8_t {
#define STREAMHAZ_SYNC_ENUMERATOR(kind, name, host) kind,
  STREAMHAZ_SYNC_KINDS(STREAMHAZ_SYNC_ENUMERATOR)
#undef STREAMHAZ_SYNC_ENUMERATOR
};
const char* to_string(SyncKind k);
bool blocks_host(SyncKind k);
std::optional<SyncKind> sync_kind_named(std::string_view name);
// "wait, event-sync, stream-sync, device-sync, legacy-barrier"
std::string sync_kind_names();

struct WhatIf {
  std::vector<std::string> lines;                // as given, for reports
  std::set<std::pair<int, uint64_t>> drop;        // synchronisations removed (rank, seq); legacy-stream
                                                  // operations: their implicit barrier
  std::set<SyncKind> drop_kinds;
  std::vector<AddedWait> add;
  std::vector<DurationScale> scales;
  bool minimal_sync = false;                      // resolved by the caller into drop + add
  std::optional<BufferRotation> rotation;         // resolved by the caller with rotate_buffers
  bool empty() const {
    return drop.empty() && drop_kinds.empty() && add.empty() && scales.empty() && !minimal_sync && !rotation;
  }
};

class WhatIfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses one what-if line (docs/sync-and-replay.md) into `out`; throws WhatIfError naming
// what is wrong. Blank lines and `#` comments are ignored.
void parse_what_if(const std::string& line, WhatIf& out);
// The lines of a what-if spec as parse_what_if reads them.
std::string format_what_if(const WhatIf& w);

// Throws WhatIfError for an edit that names nothing in `run`: a rank it does not have, a seq
// that is no synchronisation (drop) or operation (add-wait) of that rank, a kind of
// synchronisation it never calls. An edit of nothing would predict a confident "+0.00 %".
// (Scales are matched by the Replayer: scales_any.)
void check_what_if_targets(const std::vector<RankRecords>& run, const WhatIf& w);

// `drop kind=legacy-barrier`: every legacy-stream operation goes into `w.drop` (its record
// stays; the replay and the race check skip its implicit barrier, keeping its stream order).
void resolve_barrier_drops(const std::vector<RankRecords>& run, WhatIf& w);

// A copy of the run with the drops and added waits applied (scales act in the replay; dropped
// legacy-stream barriers act there and in the race check through `w.drop`).
std::vector<RankRecords> apply_edits(const std::vector<RankRecords>& run, const WhatIf& w);
// Where each operation of a run lies among its rank's records, where its names are defined, and
// each rank's first free event id: what edit_inserts and the minimal synchronisation's text
// would otherwise read every record of a rank for. Kept beside a run that is edited many times
// (the over-synchronisation pass makes what-ifs per site, each a read of the whole window
// without it). Valid while the run's records are unchanged.
class RecordPlaces {
 public:
  RecordPlaces() = default;
  explicit RecordPlaces(const std::vector<RankRecords>& run);
  // Per rank index: (op seq, record index), sorted.
  const std::vector<std::pair<uint64_t, size_t>>& ops(size_t rank_index) const { return ranks_[rank_index].ops; }
  // Per rank index: the indices of its StringDef, StreamName and BufferName records, in order.
  const std::vector<size_t>& names(size_t rank_index) const { return ranks_[rank_index].names; }
  trace::EventId first_free_event(size_t rank_index) const { return ranks_[rank_index].first_free_event; }
  // Whether these are `run`'s places (made from it; an index of another run is not used).
  bool of(const std::vector<RankRecords>& run) const { return run_ == &run; }

 private:
  const std::vector<RankRecords>* run_ = nullptr;
  struct Rank {
    std::vector<std::pair<uint64_t, size_t>> ops;
    std::vector<size_t> names;
    trace::EventId first_free_event = 1;
  };
  std::vector<Rank> ranks_;
};

// The added waits alone, as records among each rank's own (per rank index; empty for a rank
// without added waits): what apply_edits writes, for a check that reads the run in place
// (AnalysisOptions::inserts; the drops go to its skip_syncs). Throws WhatIfError as apply_edits.
// `places`: the run's, where kept (the same inserts, found without reading the records).
std::vector<RecordInserts> edit_inserts(const std::vector<RankRecords>& run, const WhatIf& w,
                                        const RecordPlaces* places = nullptr);

// A copy of the run whose rotating buffers number `spec.buffers` (docs/sync-and-replay.md):
// pointers of each use moved to its new buffer, new buffers allocated and named; where the
// run ordered each reuse with a per-buffer event wait, those waits go into `edits.drop` and
// the new rotation's waits into `edits.add` (apply them with apply_edits). Sequence numbers are
// kept, so the replay fitted to `run` applies. Throws WhatIfError when no rotation is found.
std::vector<RankRecords> rotate_buffers(const std::vector<RankRecords>& run, const BufferRotation& spec,
                                        WhatIf& edits, std::vector<std::string>* notes = nullptr);

// Is this record one of the synchronisations a what-if can drop, and which kind? (Never
// LegacyBarrier: that is an operation's, see StreamKinds.)
std::optional<SyncKind> sync_kind(const trace::Record& r);

// --- the simulation ----------------------------------------------------------------------

struct ReplayOptions {
  std::string step_range = "step";   // NVTX range that wraps one training step
  int64_t host_gap_threshold_ns = 10000;  // longer unexplained delays on an idle GPU are host time
  // The first of several steps is warm-up, not measured; false where the run given starts
  // after the warm-up already (the over-synchronisation pass's judged steps).
  bool first_step_warmup = true;
};

struct OpTime {
  int64_t issue = 0;  // when the host issued it
  int64_t ready = 0;  // when the GPU could have started it (stream order, events), host aside
  int64_t start = 0, end = 0;
};

// When a synchronisation call was issued and when the host or stream could go on.
struct SyncTime {
  int64_t issue = 0;
  int64_t done = 0;        // host syncs: return; waits: when the waited event completed
  int64_t stream_tail = 0; // waits: when the waiting stream's earlier work completed
};

struct Schedule {
  std::vector<SeqTable<OpTime>> ops;     // per rank index: seq -> times
  std::vector<SeqTable<SyncTime>> syncs;  // per rank index: seq -> times
  std::vector<int64_t> rank_step_ns;  // per rank index
  int64_t step_ns = 0;                // slowest rank's step time
  int measured_steps = 0;             // step instances averaged (0: makespan of the run)
  // Per rank index: [start, end) of each step instance averaged (the whole run without steps).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> step_windows;
};

class Replayer {
 public:
  // Fits the model to `run` (the unedited trace). Throws WhatIfError if it holds no GPU times.
  Replayer(const std::vector<RankRecords>& run, ReplayOptions options = {});
  // The same without a copy of the records: `*run` must outlive the replayer.
  Replayer(const std::vector<RankRecords>* run, ReplayOptions options = {});
  ~Replayer();

  // The schedule of the captured run as measured (untimed operations estimated).
  const Schedule& measured() const;
  // Simulates `edited` (apply_edits of the fitted run) with the scales applied; legacy-stream
  // operations in `no_barrier` (rank, seq: a what-if's drops) lose their implicit barrier, and
  // synchronisations named there are left out (so a what-if of drops alone needs no edited copy).
  Schedule run(const std::vector<RankRecords>& edited, const std::vector<DurationScale>& scales = {},
               const std::set<std::pair<int, uint64_t>>* no_barrier = nullptr) const;
  // The unedited run simulated: equals measured() up to the model's residuals.
  Schedule run_unchanged() const;
  // `run` (the fitted run or one with the same seqs) with `w`'s drops, added waits and scales,
  // read in place: what run(apply_edits(run, w), w.scales, &w.drop) gives, with no edited copy.
  // `places`: the run's (edit_inserts), where kept.
  Schedule run_in_place(const std::vector<RankRecords>& run, const WhatIf& w,
                        const RecordPlaces* places = nullptr) const;

  std::vector<std::string> notes() const;  // how durations were obtained, steps found...
  // Does the scale act on any operation of the run (its stream and kernel patterns match)?
  bool scales_any(const DurationScale& s) const;
  const std::vector<RankRecords>& records() const;
  std::string stream_name(int rank_index, trace::StreamId s) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The measured steps' own times, of the rank with the slowest mean: "steps of rank 0: 4.08,
// 4.12, 4.16 ms" (a range and the median past a few steps); empty without steps.
std::string describe_step_times(const Schedule& measured, const std::vector<RankRecords>& run);

// glob with `*` and `?` (the same rules as suppression patterns).
bool wildcard_match(const std::string& pattern, const std::string& text);

}  // namespace streamhaz::analysis
