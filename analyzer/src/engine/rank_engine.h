// The happens-before engine of one rank: applies that rank's records in sequence order,
// keeps a vector clock per stream and per host timeline (over this rank's own timelines, or
// over every rank's in the dense reference mode), turns every operation's footprint
// into shadow-memory accesses and reports unordered conflicts to the finding collector.
// docs/analysis.md states each rule and why its edge is sound. Its members live in files by
// topic: rank_engine.cpp (construction, the record loop), rank_engine_streams.cpp,
// rank_engine_events.cpp, rank_engine_operations.cpp, rank_engine_nccl.cpp (collectives,
// running ahead), rank_engine_memory.cpp (allocations, footprints, shadow memory) and
// rank_engine_report.cpp (what a finding says).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock/receipts.h"
#include "clock/vector_clock.h"
#include "engine/collective_matcher.h"
#include "engine/engine_options.h"
#include "findings/finding_collector.h"
#include "model/stream_kind.h"
#include "footprints/kernel_summary.h"
#include "model/address_book.h"
#include "model/footprint.h"
#include "model/op_stamp.h"
#include "model/rank_seqs.h"
#include "shadow/pointer_shadow.h"
#include "shadow/shadow_memory.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

class RankEngine {
 public:
  // `index`: the rank's place in the analysis (frontiers are indexed by it). `shared_timelines`:
  // the registry of every rank in the dense mode, null for this rank's own numbering.
  RankEngine(int rank, uint32_t index, TimelineRegistry* shared_timelines, CollectiveMatcher& collectives,
             FindingCollector& findings, const EngineOptions& options);
  RankEngine(const RankEngine&) = delete;
  RankEngine& operator=(const RankEngine&) = delete;

  void apply(const trace::Record& r);
  void finish();  // end of the trace: completes a kernel still waiting for its footprint

  // Waiting for the other ranks to reach the collective this rank just issued.
  bool blocked() const { return blocked_.has_value(); }
  const CollectiveKey& blocked_on() const { return blocked_->key; }
  void resume();  // the collective matched (or was given up): its stream joins the starts

  // Brings this rank's hot state (the engine, its streams, events and shadow-memory nodes)
  // toward the caches while another rank runs: with a thousand ranks taking turns at every
  // collective, each turn otherwise starts with that state evicted. Changes nothing.
  void prefetch() const;
  static void prefetch_bytes(const void* p, size_t bytes);

  int rank() const { return rank_; }
  uint32_t index() const { return index_; }
  uint64_t operations() const { return operations_; }
  uint64_t operations_without_footprint() const { return without_footprint_; }
  // Kernels by the weakest tier of their footprint (pointer: pointer-tier accesses only).
  const std::array<uint64_t, trace::kFootprintTierCount>& kernels_by_tier() const { return kernels_by_tier_; }
  // The static tier: summaries applied to launches whose trace kept the argument bytes.
  void use_kernel_summaries(const KernelSummaries* s) { summaries_ = s; }
  uint64_t kernels_summary_unused() const { return summary_unused_; }

  // Public for graph_replay.cpp and tests.
  static constexpr uint32_t kHostSlot = UINT32_MAX;

 private:
  struct HostTimeline {
    TimelineId timeline = 0;
    VectorClock clock;
    uint64_t version = 0;  // bumped whenever the clock grows, so streams join it lazily
  };
  struct StreamState {
    trace::StreamId id = 0;
    TimelineId timeline = 0;
    VectorClock clock;
    uint32_t device = 0;
    uint32_t flags = 0;
    trace::StringId name = 0;
    trace::GraphId capturing = 0;  // the open capture (a capture key) this stream is in: operations do not run now
    trace::GraphId graph = 0;      // a graph branch timeline (replays of captured work)
    const HostTimeline* host_seen = nullptr;
    uint64_t host_version_seen = 0;
    // Legacy-stream work this blocking stream's next command must wait for. Kept apart from
    // `clock` until then: synchronising with this stream promises nothing about legacy work
    // issued after its last command.
    VectorClock legacy_pending;
    bool legacy() const { return legacy_stream(flags); }
    bool blocking() const { return blocking_stream(flags); }
  };
  struct EventState {
    VectorClock clock;
    bool recorded = false;
    trace::GraphId captured_in = 0;  // last recorded on a capturing stream: that capture's key (graph dependency)
  };
  struct CapturedGraph {
    bool open = false;                          // still being captured (then keyed by its capture key)
    trace::GraphId into = 0;                    // cuStreamBeginCaptureToGraph: the graph it adds to
    std::vector<trace::Record> records;         // in issue order, Access records included
    std::vector<trace::StreamId> streams;       // captured streams, origin first
    std::map<trace::StreamId, uint32_t> branch; // captured stream -> branch slot (made at launch)
    uint64_t last_kernel_seq = 0;
  };
  struct PointerArg {
    uint64_t addr;
    trace::AccessMode role;  // Read, Write, or ReadWrite: unknown
  };
  struct PendingKernel {
    bool active = false;
    OpStamp op;
    uint32_t slot = 0;
    std::vector<ByteRange> ranges;
    std::vector<PointerArg> pointers;  // pointer-tier accesses: addresses and roles, extent unknown
  };
  struct Blocked {
    CollectiveKey key;
    uint32_t slot;
    uint32_t comm_rank;  // this rank's rank in the communicator
  };
  // The per-rank, integers-only identity of a race pattern (the finding key's cheap twin).
  struct PatternKey {
    uint64_t a, b, c, d, e;
    bool operator==(const PatternKey&) const = default;
  };
  struct PatternHash {
    size_t operator()(const PatternKey& k) const {
      uint64_t h = k.a * 0x9e3779b97f4a7c15ull;
      h ^= (k.b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
      h ^= (k.c + (h << 6) + (h >> 2)) * 0x94d049bb133111ebull;
      h ^= (k.d + (h << 7)) * 0xff51afd7ed558ccdull;
      h ^= k.e + (h >> 3);
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };

  // Record handlers.
  void on(const trace::StringDef& r);
  void on(const trace::HostThread& r);
  void on(const trace::StreamCreate& r);
  void on(const trace::StreamName& r);
  void on(const trace::EventCreate& r);
  void on(const trace::EventRecord& r);
  void on(const trace::EventWait& r);
  void on(const trace::EventSync& r);
  void on(const trace::EventQuery& r);
  void on(const trace::StreamSync& r);
  void on(const trace::StreamQuery& r);
  void on(const trace::DeviceSync& r);
  void on(const trace::Kernel& r);
  void on(const trace::Access& r);
  void on(const trace::Memcpy& r);
  void on(const trace::Memset& r);
  void on(const trace::HostFunc& r);
  void on(const trace::Nccl& r);
  void on(const trace::Alloc& r);
  void on(const trace::Free& r);
  void on(const trace::BufferName& r);
  void on(const trace::CaptureBegin& r);
  void on(const trace::CaptureEnd& r);
  void on(const trace::GraphLaunch& r);
  template <class T>
  void on(const T&) {}  // Meta, Timing, End: nothing to order

  // Streams, events, host.
  // Inline fast path: a known stream with a small id outside graph replays.
  uint32_t slot_of(trace::StreamId id) {
    if (!replaying_ && id < slot_by_id_.size() && slot_by_id_[id]) return slot_by_id_[id] - 1;
    return slot_of_any(id);
  }
  uint32_t slot_of_any(trace::StreamId id);
  StreamState& stream(trace::StreamId id) { return streams_[slot_of(id)]; }
  EventState& event(trace::EventId id);
  uint32_t new_slot(trace::StreamId id, uint32_t device, uint32_t flags, bool by_id);
  StreamState* known_stream(trace::StreamId id);  // created or used before, else null
  void sync_with_host(StreamState& s);
  void host_joins(const VectorClock& c, EdgeSites via = {});
  // A successful query of what the host already covers (EngineOptions::on_idle_query): true where
  // the check leaves it out (skip_idle_queries).
  bool idle_query(uint64_t seq, const VectorClock& observed);
  // The over-synchronisation pass's sites of the synchronisation record `seq` (none: not judged).
  EdgeSites site_of(uint64_t seq) const;
  bool tracing_sites() const { return bool(options_.on_ordered_by_sites); }
  // EngineOptions::order_checks: the operation `seq` at epoch `e` (clock `now`) is an earlier or
  // a later side of a pair to check.
  bool checking_order() const { return options_.order_checks != nullptr; }
  void note_order(uint64_t seq, Epoch e, const VectorClock& now);
  // The point in stream order where a command issued now takes effect (host and legacy-stream
  // edges applied); `tick` makes it a new operation with its own epoch.
  Epoch enqueue(uint32_t slot, bool tick = true);
  // The operation being applied is a legacy-stream operation whose implicit barrier a what-if
  // removed (its seq in EngineOptions::skip_syncs): its stream order is kept.
  bool barrier_skipped() const;
  OpStamp stamp(const trace::OpCommon& op, Epoch e, uint32_t slot, OpKind kind, trace::StringId name = 0,
                uint8_t flags = 0) const;

  // Footprints and findings.
  enum class HostWait { None, Before, After };
  HostWait host_wait_for_copy(const trace::Memcpy& m) const;
  // Checks one range of an operation; conflicts gather until report_conflicts(op), so that
  // an operation reading and writing the same bytes (in place) gives one finding per pair.
  void touch(const OpStamp& op, const ByteRange& r, const VectorClock& now);
  // The same for the over-synchronisation pass's checks (phantoms, pairs ordered by sites, order
  // checks); touch() stays the race check's own path.
  void touch_for_pass(const OpStamp& op, const ByteRange& r, const VectorClock& now);
  void report_conflicts(const OpStamp& op);
  // Hands the pass the pairs `op` met that are ordered only through synchronisation sites.
  void report_ordered(const OpStamp& op);
  // `possible`: one side is a pointer-tier access and the evidence is not enough for a race
  // (pointer_evidence.h).
  void report(const Conflict& c, const OpStamp& second, trace::AccessMode second_role, bool possible = false);
  void touch_pointers(const OpStamp& op, const std::vector<PointerArg>& pointers, const VectorClock& now);
  // A conflict with pointer evidence on one side or both, filed as a race or a possible race.
  void gather_pointer_conflict(const Conflict& c, const OpStamp& second, trace::AccessMode second_role,
                               bool ordered = false);
  // Adds the static tier's ranges of a launch to the pending kernel (kernel_summary.h).
  void add_summary_ranges(const trace::Kernel& k);
  void flush_pending();
  OpRef describe(const OpStamp& op, trace::AccessMode role) const;
  std::string stream_label(uint32_t slot) const;
  const std::string& text(trace::StringId id) const;

  // The end of a cross-rank call: its stream joins what the call received.
  // What the call's start knew of other ranks is in posted_known_.
  void receive(const CollectiveKey& key, uint32_t slot, uint32_t comm_rank);
  void note_receipt(StreamState& s, Known knowledge);
  // The same for a call this rank runs ahead of: its stream gains nothing, the receipt holds
  // the promise of what the call will tell, and the post waits in ahead_posts_.
  void run_ahead(const trace::Nccl& r, uint32_t slot);
  bool may_run_ahead(const trace::Nccl& r) const;
  void hand_over_ahead_posts();
  // Drops receipts on `timeline` that no clock of this rank can look up any more.
  void prune_receipts(TimelineId timeline);

  // Stream capture and graph launch (graph_replay.cpp).
  // Inline: every operation asks, and almost never is a capture open.
  CapturedGraph* captured(const trace::Record& r, trace::StreamId stream) {
    return replaying_ || open_captures_ == 0 ? nullptr : captured_open(r, stream);
  }
  CapturedGraph* captured_open(const trace::Record& r, trace::StreamId stream);
  void replay(trace::GraphId g, uint32_t launch_slot);

  int rank_;
  uint32_t index_;
  TimelineRegistry own_timelines_;
  TimelineRegistry& timelines_;
  CollectiveMatcher& collectives_;
  FindingCollector& findings_;
  EngineOptions options_;
  // This rank's entries of options_' skip_syncs, phantom_ops, lasting_phantom_ops and sync_sites,
  // asked about every operation.
  RankSeqs skipped_syncs_, phantom_ops_, lasting_phantom_ops_;
  RankSeqMap<SyncSiteIds> sync_sites_;

  // Ids are dense in traces the tracer writes, but a corrupt one may hold any 32-bit id: only
  // small stream ids are indexed directly, strings and events live in hash maps.
  static constexpr trace::StreamId kDirectStreamIds = 1u << 16;
  std::unordered_map<trace::StringId, std::string> strings_;
  std::vector<StreamState> streams_;
  std::vector<uint32_t> slot_by_id_;  // stream id (< kDirectStreamIds) -> slot + 1, 0: not seen
  // Slots of the blocking streams, which the legacy stream's barriers join: most streams of a
  // PyTorch process are non-blocking (a DeepSpeed trace has 133, one blocking). Rebuilt when a
  // stream is added or re-created.
  std::vector<uint32_t> blocking_slots_;
  bool blocking_slots_stale_ = true;
  const std::vector<uint32_t>& blocking_slots();
  std::unordered_map<trace::StreamId, uint32_t> slot_by_large_id_;  // the other ids -> slot + 1
  // Events likewise: the tracer numbers them densely from 0, so small ids index a vector (one
  // cache line per event with its clock inline, where a hash map costs a bucket and a node).
  static constexpr trace::EventId kDirectEventIds = 1u << 14;
  std::vector<EventState> events_by_id_;
  std::unordered_map<trace::EventId, EventState> events_;  // the other ids
  std::map<uint64_t, HostTimeline> hosts_;  // by host thread (one entry unless strict)
  HostTimeline* host_ = nullptr;
  Receipts receipts_;  // where cross-rank order entered this rank (projected clocks)
  AddressBook book_;
  ShadowMemory shadow_;
  PointerShadow pointer_shadow_;
  // Captured graphs by graph id, and captures still open by a key of their own (the graph of a
  // plain capture is known only at its end): kCaptureKeyBit marks a key, which no graph id has.
  std::map<trace::GraphId, CapturedGraph> graphs_;
  static constexpr trace::GraphId kCaptureKeyBit = trace::GraphId{1} << 63;
  trace::GraphId captures_begun_ = 0;
  uint32_t open_captures_ = 0;  // graphs_ entries still open: none lets captured() return at once
  const trace::Record* current_ = nullptr;  // the record being applied (for capture)

  // Replay of a captured graph: stream ids map to branch slots, events are the graph's own.
  const CapturedGraph* replaying_ = nullptr;
  std::unordered_map<trace::EventId, VectorClock> replay_events_;

  PendingKernel pending_;
  std::optional<Blocked> blocked_;
  // The last cross-rank call's start and what it knew of other ranks (projected), kept until
  // it is received; members so that their capacity is reused at every collective.
  VectorClock collective_start_;
  std::vector<Known> posted_known_;
  // Running ahead of collectives (CollectiveMatcher::post): every start this rank posted (no
  // other rank can know more of this rank than that), and how many calls in a row it took
  // ahead (it posts the next one the usual way at the matcher's limit, so that all ranks
  // wait at the same calls and then each runs through that many with its state in the caches).
  VectorClock posted_bound_;
  uint32_t ran_ahead_ = 0;
  // Posts of calls it ran ahead of, handed to the matcher together (one lock, not one per
  // call) before its next other post and at its end; the entries keep their capacity.
  std::vector<AheadPost> ahead_posts_;
  size_t ahead_buffered_ = 0;
  std::vector<ClockValue> live_scratch_;  // prune_receipts
  std::vector<ByteRange> ranges_;      // scratch
  std::vector<Conflict> conflicts_;    // scratch
  struct OpConflict {
    Conflict c;
    trace::AccessMode second_role;
  };
  std::vector<OpConflict> op_conflicts_;  // of the operation being checked
  std::vector<OpConflict> op_possible_;   // its possible conflicts (pointer tier)
  std::vector<OpConflict> op_ordered_;    // its pairs ordered only through sites (tracing_sites())
  std::vector<OpStamp> op_passed_over_;   // phantoms of those pairs a later one stands for
  std::vector<Conflict> ordered_scratch_;
  std::vector<SiteId> sites_scratch_;
  bool pass_checks_ = false;  // touch_for_pass()
  // Order checks of this rank: the latest epoch of each earlier side (clock 0: not yet issued),
  // and the earlier sides of each later side.
  std::unordered_map<uint64_t, Epoch> check_first_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> check_second_;
  std::vector<Conflict> pointer_conflicts_;  // scratch
  std::unordered_map<PatternKey, size_t, PatternHash> patterns_;
  uint64_t operations_ = 0;
  uint64_t without_footprint_ = 0;
  std::array<uint64_t, trace::kFootprintTierCount> kernels_by_tier_{};
  const KernelSummaries* summaries_ = nullptr;
  std::unordered_map<trace::StringId, const KernelSummary*> summary_of_name_;
  uint64_t summary_unused_ = 0;
};

}  // namespace streamhaz::analysis
