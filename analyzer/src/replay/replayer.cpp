// The replay model (docs/sync-and-replay.md): every API call is issued a host gap after the
// previous call returned; an operation starts when its stream's earlier work and the events
// it waits for are done and the host has issued it, plus its own launch delay; it runs for its
// measured (or estimated) duration; a collective ends once its last rank has started it, plus
// its own duration. Fitting reads the gaps, delays and durations off the trace so that the
// unedited run replays as measured; edits and scales then change what follows from them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/collective_matcher.h"
#include "model/rank_seqs.h"
#include "model/stream_kind.h"
#include "replay/steps.h"
#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::min() / 4;

struct StreamInfo {
  uint32_t device = 0;
  uint32_t flags = 0;
  std::string name;
  bool legacy() const { return legacy_stream(flags); }
  bool blocking() const { return blocking_stream(flags); }
};

struct OpParams {
  int64_t duration = 0;   // measured or estimated
  int64_t own = 0;        // collectives: end minus the last rank's start (own duration)
  int64_t delay = 0;      // launch delay after the op was ready and issued (fitted)
  bool timed = false;
  bool collective = false;
  uint64_t comm = 0, comm_seq = 0;
  uint32_t nranks = 1;
  const std::string* kernel = nullptr;  // kernel name (in its rank's strings), for kernel scales
  trace::StreamId stream = 0;
};

struct Measured {
  int64_t start = 0, end = 0;
};

// Busy intervals of one device, sorted by start, for "was the GPU idle then?".
struct BusyList {
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<int64_t> max_end;  // prefix maximum of ends
  void finish() {
    std::sort(spans.begin(), spans.end());
    max_end.resize(spans.size());
    int64_t m = kNone;
    for (size_t i = 0; i < spans.size(); ++i) max_end[i] = m = std::max(m, spans[i].second);
  }
  bool busy(int64_t a, int64_t b) const {  // some span intersects (a, b)
    auto it = std::lower_bound(spans.begin(), spans.end(), std::make_pair(b, kNone));
    if (it == spans.begin()) return false;
    return max_end[static_cast<size_t>(it - spans.begin()) - 1] > a;
  }
};

struct RankInfo {
  std::unordered_map<trace::StringId, std::string> strings;
  std::unordered_map<trace::StreamId, StreamInfo> streams;
  SeqTable<Measured> timing;
  SeqTable<OpParams> ops;
  SeqTable<int64_t> gap;  // host gap before the call with this seq
  std::map<uint32_t, BusyList> busy;          // by device
  std::vector<std::vector<uint64_t>> steps;
  size_t pattern_period = 0;  // steps from the repeating pattern of this many calls (no step range)
};

// The seqs of a rank's records, for SeqTable::span; none when they are too far apart for an array
// (a damaged trace), which only makes the tables slower.
std::pair<uint64_t, uint64_t> seq_span(const RankRecords& rank) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const trace::Record& r : rank.records)
    if (const uint64_t seq = trace::api_seq(r)) lo = std::min(lo, seq), hi = std::max(hi, seq);
  if (lo > hi || hi - lo > 4 * rank.records.size() + 4096) return {1, 0};
  return {lo, hi};
}

int size_class(uint64_t bytes) { return bytes ? 64 - __builtin_clzll(bytes) : 0; }

// The duration class of an operation, for untimed ones: kind, name and size class (powers of
// two). Numbers, not text: every operation of every rank gets one when a replay is fitted.
struct DurationKey {
  enum class Kind : uint8_t { Other, Kernel, Memcpy, Memset, Nccl, HostFunc, Graph } kind = Kind::Other;
  uint64_t detail = 0;  // copy or collective kind, graph id
  int size = 0;         // size class
  size_t name = 0;      // kernels: their name's number in KernelNames
  auto operator<=>(const DurationKey&) const = default;
};

// Kernel names numbered by their text (ranks number strings each their own way).
using KernelNames = std::map<std::string, size_t, std::less<>>;

DurationKey duration_key(const trace::Record& r, const RankInfo& info, KernelNames& names) {
  using Kind = DurationKey::Kind;
  return std::visit([&](const auto& x) -> DurationKey {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, trace::Kernel>) {
      auto it = info.strings.find(x.name);
      const std::string_view text = it != info.strings.end() ? std::string_view(it->second) : std::string_view();
      auto known = names.find(text);
      if (known == names.end()) known = names.emplace(std::string(text), names.size()).first;
      return {Kind::Kernel, 0, 0, known->second};
    } else if constexpr (std::is_same_v<T, trace::Memcpy>) {
      return {Kind::Memcpy, static_cast<uint64_t>(x.kind), size_class(x.width * x.rows)};
    } else if constexpr (std::is_same_v<T, trace::Memset>) {
      return {Kind::Memset, 0, size_class(x.width * x.rows)};
    } else if constexpr (std::is_same_v<T, trace::Nccl>) {
      return {Kind::Nccl, static_cast<uint64_t>(x.kind), size_class(x.count * x.elem_bytes)};
    } else if constexpr (std::is_same_v<T, trace::HostFunc>) {
      return {Kind::HostFunc};
    } else if constexpr (std::is_same_v<T, trace::GraphLaunch>) {
      return {Kind::Graph, static_cast<uint64_t>(x.graph)};
    } else {
      return {};
    }
  }, r);
}

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

struct Replayer::Impl {
  explicit Impl(std::vector<RankRecords>&& copy) : owned(std::move(copy)), run(owned) {}
  explicit Impl(const std::vector<RankRecords>* borrowed) : run(*borrowed) {}
  void prepare(ReplayOptions o) {
    options = std::move(o);
    scan();
    fit();
  }
  ReplayOptions options;
  std::vector<RankRecords> owned;  // empty when borrowed
  const std::vector<RankRecords>& run;
  std::vector<RankInfo> ranks;
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // seq_span of each rank of `run`
  std::map<CollectiveKey, int64_t> last_start;  // measured: latest start of a collective over its ranks
  int64_t t0 = 0;
  Schedule measured;
  std::vector<std::string> notes;

  void scan();
  void fit();
  Schedule simulate(const std::vector<RankRecords>& records, const std::vector<DurationScale>* scales, bool fitting,
                    const std::set<std::pair<int, uint64_t>>* no_barrier = nullptr,
                    const std::vector<RecordInserts>* inserts = nullptr);
  void step_times(Schedule& s) const;
  class Simulation;  // below
  bool scales(const DurationScale& s, size_t ri, const OpParams& p) const;  // does `s` act on `p`?
  double scale_of(size_t ri, const OpParams& p, const std::vector<DurationScale>* scales) const;
  std::string stream_label(size_t ri, trace::StreamId s) const {
    auto it = ranks[ri].streams.find(s);
    if (it != ranks[ri].streams.end() && !it->second.name.empty()) return it->second.name;
    return fmt::format("stream {}", s);
  }
};

// What the fit and every simulation read once: names, streams, measured intervals, durations.
void Replayer::Impl::scan() {
  ranks.resize(run.size());
  std::map<DurationKey, std::vector<int64_t>> by_key;
  std::map<DurationKey::Kind, std::vector<int64_t>> by_kind;
  KernelNames kernel_names;
  std::vector<std::pair<size_t, std::pair<uint64_t, DurationKey>>> untimed;
  size_t timed_ops = 0, all_ops = 0;
  t0 = std::numeric_limits<int64_t>::max();
  for (size_t ri = 0; ri < run.size(); ++ri) {
    RankInfo& info = ranks[ri];
    const auto [lo, hi] = spans.emplace_back(seq_span(run[ri]));
    info.timing.span(lo, hi);
    info.ops.span(lo, hi);
    info.gap.span(lo, hi);
    for (const trace::Record& r : run[ri].records)
      if (const auto* t = std::get_if<trace::Timing>(&r))
        if (t->end_ns >= t->start_ns && !info.timing.contains(t->op_seq))
          info.timing[t->op_seq] = {static_cast<int64_t>(t->start_ns), static_cast<int64_t>(t->end_ns)};
    for (const trace::Record& r : run[ri].records) {
      if (const auto* s = std::get_if<trace::StringDef>(&r)) info.strings[s->id] = s->text;
      if (const auto* c = std::get_if<trace::StreamCreate>(&r)) {
        info.streams[c->stream].device = c->device;
        info.streams[c->stream].flags = c->flags;
      }
      if (const auto* n = std::get_if<trace::StreamName>(&r)) info.streams[n->stream].name = info.strings[n->name];
      const trace::OpCommon* op = trace::op_common(r);
      if (!op) continue;
      ++all_ops;
      if (!info.streams.count(op->stream))
        info.streams[op->stream].flags = uncreated_stream_flags(op->stream);
      OpParams p;
      p.stream = op->stream;
      if (const auto* k = std::get_if<trace::Kernel>(&r)) p.kernel = &info.strings[k->name];  // map nodes stay put
      if (const auto* n = std::get_if<trace::Nccl>(&r); n && is_collective(*n)) {
        p.collective = true;
        p.comm = n->comm;
        p.comm_seq = n->comm_seq;
        p.nranks = n->nranks;
      }
      const DurationKey key = duration_key(r, info, kernel_names);
      if (const Measured* m = info.timing.find(op->seq)) {
        p.timed = true;
        ++timed_ops;
        p.duration = m->end - m->start;
        by_key[key].push_back(p.duration);
        by_kind[key.kind].push_back(p.duration);
        t0 = std::min(t0, m->start);
        info.busy[info.streams[op->stream].device].spans.push_back({m->start, m->end});
        if (p.collective) {
          int64_t& last = last_start.try_emplace(CollectiveKey{p.comm, p.comm_seq}, kNone).first->second;
          last = std::max(last, m->start);
        }
      } else {
        untimed.push_back({ri, {op->seq, key}});
      }
      info.ops[op->seq] = std::move(p);
    }
    for (auto& [dev, list] : info.busy) list.finish();
    bool from_pattern = false;
    info.steps = steps_of(run[ri], options.step_range, &from_pattern);
    if (from_pattern) info.pattern_period = run[ri].pattern_period;
  }
  if (timed_ops == 0) {
    // The tracer writes GPU times late (CUPTI's activity buffers): a cut-off trace may have
    // lost them rather than never had them.
    const auto cut = std::find_if(run.begin(), run.end(), [](const RankRecords& r) { return r.truncated; });
    if (cut != run.end())
      throw WhatIfError("the readable part of the traces holds no GPU times: " + cut->path +
                        " was cut off, and the tracer writes GPU times late, so they may have been in the lost part");
    throw WhatIfError("the traces hold no GPU times: record them with `streamhaz run --gpu-times all`");
  }
  // Untimed operations (sampled GPU times): the median of timed ones of the same kind, name
  // and size class; else of the same kind; else zero.
  size_t by_class = 0, by_kind_only = 0, zero = 0;
  for (const auto& [ri, seq_key] : untimed) {
    OpParams& p = ranks[ri].ops[seq_key.first];
    if (auto it = by_key.find(seq_key.second); it != by_key.end()) {
      p.duration = median(it->second);
      ++by_class;
    } else if (auto k = by_kind.find(seq_key.second.kind); k != by_kind.end()) {
      p.duration = median(k->second);
      ++by_kind_only;
    } else {
      ++zero;
    }
  }
  for (size_t ri = 0; ri < run.size(); ++ri)
    ranks[ri].ops.for_each([&](uint64_t seq, OpParams& p) {
      p.own = p.duration;
      if (!p.collective || !p.timed) return;
      auto it = last_start.find(CollectiveKey{p.comm, p.comm_seq});
      p.own = std::max<int64_t>(0, ranks[ri].timing.at(seq).end - it->second);
    });
  notes.push_back(fmt::format("{} of {} operations have GPU times", timed_ops, all_ops));
  if (!untimed.empty())
    notes.push_back(fmt::format(
        "{} untimed operations got the median duration of timed ones of the same kind, name and size class, {} of "
        "the same kind only, {} none (0 ns)",
        by_class, by_kind_only, zero));
}

bool Replayer::Impl::scales(const DurationScale& s, size_t ri, const OpParams& p) const {
  if (!s.stream.empty() && !wildcard_match(s.stream, stream_label(ri, p.stream))) return false;
  return s.kernel.empty() || (p.kernel && !p.kernel->empty() && wildcard_match(s.kernel, *p.kernel));
}

double Replayer::Impl::scale_of(size_t ri, const OpParams& p, const std::vector<DurationScale>* scales) const {
  if (!scales) return 1;
  double f = 1;
  for (const DurationScale& s : *scales)
    if (this->scales(s, ri, p)) f *= s.factor;
  return f;
}

namespace {

struct StreamSim {
  const StreamInfo* info = nullptr;  // the stream as traced (Simulation::stream_of)
  int64_t tail = kNone;          // end of the last operation
  int64_t floor = kNone;         // events waited for since then
  int64_t legacy_floor = kNone;  // legacy-stream work a blocking stream's next command waits for
  bool capturing = false;
};

}  // namespace

// One pass over every rank's records. Fitting (measured times known) sets the host gaps and
// launch delays; otherwise the times follow from the model. Collectives join the ranks.
// One simulation of a run (the fit, the run as traced, or an edited one). Each rank's records are
// played in order, as RankEngine applies them, until the rank ends or blocks on a collective; the
// ranks take turns until every one has ended.
class Replayer::Impl::Simulation {
 public:
  Simulation(Impl& impl, const std::vector<RankRecords>& records, const std::vector<DurationScale>* scales,
             bool fitting, const std::set<std::pair<int, uint64_t>>* no_barrier,
             const std::vector<RecordInserts>* inserts)
      : impl_(impl), records_(records), scales_(scales), fitting_(fitting), no_barrier_(no_barrier),
        inserts_(inserts), sims_(records.size()) {
    out_.ops.resize(records.size());
    out_.syncs.resize(records.size());
    // Operations are most of a rank's calls: an array over its seqs. Synchronisations are few:
    // out_.syncs keeps them in its map, where an array would mostly hold nothing.
    for (size_t ri = 0; ri < records.size(); ++ri) {
      const auto [lo, hi] = &records == &impl_.run ? impl_.spans[ri] : seq_span(records[ri]);
      out_.ops[ri].span(lo, hi);
    }
    if (no_barrier_)
      for (const RankRecords& rank : records) no_barrier_here_.emplace_back(*no_barrier_, rank.rank);
    for (Sim& s : sims_) s.host = impl_.t0;
  }

  Schedule run() {
    for (;;) {
      bool moved = false, live = false;
      for (size_t ri = 0; ri < sims_.size(); ++ri) {
        Sim& sim = sims_[ri];
        if (sim.done) continue;
        live = true;
        if (sim.blocked) {
          auto& c = colls_[sim.key];
          if (!c.resolved) continue;
          resume(ri, c);
          moved = true;
        }
        moved = advance(ri) || moved;
      }
      if (!live) break;
      if (!moved) end_unreached_collectives();
    }
    impl_.step_times(out_);
    return std::move(out_);
  }

 private:
  struct Sim {
    size_t pos = 0;
    size_t inserted = 0;  // of the rank's RecordInserts applied
    int64_t host = 0;
    std::unordered_map<trace::StreamId, StreamSim> streams;
    std::unordered_map<trace::EventId, int64_t> events;
    bool done = false;
    bool blocked = false;
    CollectiveKey key{};
    uint64_t seq = 0;
    trace::StreamId stream = 0;
    bool barrier = true;
  };
  struct Coll {
    std::map<size_t, std::pair<int64_t, uint64_t>> starts;  // rank index -> start, seq
    uint32_t nranks = 1;
    bool resolved = false;
    int64_t last = kNone;
  };

  // A legacy-stream operation waits for the blocking streams of its device and they wait for
  // it (`barrier`), unless a what-if dropped that barrier.
  // The simulated stream `id` of rank `ri`, with its traced facts found once (every operation
  // asks for its stream, and legacy-stream ones for every other).
  StreamSim& stream_of(size_t ri, Sim& sim, trace::StreamId id) {
    StreamSim& st = sim.streams[id];
    if (!st.info) st.info = &impl_.ranks[ri].streams[id];  // map nodes stay put
    return st;
  }

  int64_t ready_of(size_t ri, Sim& sim, trace::StreamId id, bool barrier) {
    const StreamSim& st = stream_of(ri, sim, id);
    int64_t ready = std::max({st.tail, st.floor, st.legacy_floor});
    if (st.info->legacy() && barrier)
      for (auto& [other, os] : sim.streams)
        if (os.info->blocking() && os.info->device == st.info->device) ready = std::max({ready, os.tail, os.floor});
    return ready;
  }

  void finish_op(size_t ri, Sim& sim, trace::StreamId id, uint64_t seq, int64_t end, bool barrier) {
    StreamSim& st = stream_of(ri, sim, id);
    st.tail = end;
    st.floor = st.legacy_floor = kNone;
    out_.ops[ri][seq].end = end;
    if (st.info->legacy() && barrier)
      for (auto& [other, os] : sim.streams)
        if (os.info->blocking() && os.info->device == st.info->device) os.legacy_floor = std::max(os.legacy_floor, end);
  }

  int64_t device_tail(Sim& sim, uint32_t device, bool any_device) {
    int64_t t = kNone;
    for (auto& [id, st] : sim.streams)
      if (any_device || st.info->device == device) t = std::max({t, st.tail, st.floor});
    return t;
  }

  // Runs rank `ri` until it ends or blocks on a collective; true if it moved.
  bool advance(size_t ri) {
    Sim& sim = sims_[ri];
    const auto& recs = records_[ri].records;
    bool moved = false;
    const RecordInserts* added = inserts_ && ri < inserts_->size() ? &(*inserts_)[ri] : nullptr;
    auto next = [&]() -> const trace::Record* {  // an added record due here first, else the rank's own
      if (added && sim.inserted < added->size() && (*added)[sim.inserted].before <= sim.pos)
        return &(*added)[sim.inserted++].record;
      return sim.pos < recs.size() ? &recs[sim.pos++] : nullptr;
    };
    while (!sim.blocked) {
      const trace::Record* next_record = next();
      if (!next_record) {
        sim.done = true;
        break;
      }
      const trace::Record& r = *next_record;
      moved = true;
      const uint64_t seq = std::visit([](const auto& x) -> uint64_t {
        if constexpr (requires { x.seq; }) return x.seq;
        else if constexpr (requires { x.op.seq; }) return x.op.seq;
        else return 0;
      }, r);
      if (!seq) {  // no API call (strings, names, accesses, timings) or an added record
        on_added(ri, sim, r);
        continue;
      }
      // A dropped synchronisation still in the records: as if apply_edits had left it out.
      if (no_barrier_ && sync_kind(r) && no_barrier_here_[ri].contains(seq)) continue;
      const int64_t* gap = impl_.ranks[ri].gap.find(seq);
      const int64_t host_before = sim.host;
      sim.host += gap ? *gap : 0;
      if (const trace::OpCommon* op = trace::op_common(r)) on_operation(ri, sim, r, *op, host_before);
      else on_call(ri, sim, r);
    }
    return moved;
  }

  // Event records and waits a what-if added (they carry no seq).
  void on_added(size_t ri, Sim& sim, const trace::Record& r) {
    if (const auto* e = std::get_if<trace::EventRecord>(&r)) {
      StreamSim& st = stream_of(ri, sim, e->stream);
      if (!st.capturing) sim.events[e->event] = std::max({st.tail, st.floor, sim.host});
    } else if (const auto* w = std::get_if<trace::EventWait>(&r)) {
      if (auto it = sim.events.find(w->event); it != sim.events.end()) {
        StreamSim& st = stream_of(ri, sim, w->stream);
        out_.syncs[ri][0] = {sim.host, it->second, std::max(st.tail, st.floor)};
        st.floor = std::max(st.floor, it->second);
      }
    }
  }

  // An operation issued at sim.host (`host_before` plus its gap): when it is ready, starts and
  // ends, or, for a collective, the rank blocks until every rank has started it.
  void on_operation(size_t ri, Sim& sim, const trace::Record& r, const trace::OpCommon& op, int64_t host_before) {
    RankInfo& info = impl_.ranks[ri];
    StreamSim& st = stream_of(ri, sim, op.stream);
    if (st.capturing) return;  // runs at its graph's launch
    OpParams& p = info.ops[op.seq];
    const bool barrier = !no_barrier_ || !no_barrier_here_[ri].contains(op.seq);
    const int64_t ready = ready_of(ri, sim, op.stream, barrier);
    if (st.info->legacy()) {
      // The barrier as a synchronisation: when the blocking streams released the operation.
      const int64_t own = ready_of(ri, sim, op.stream, false);
      out_.syncs[ri][op.seq] = {sim.host, ready_of(ri, sim, op.stream, true), own};
    }
    // A synchronous copy from pageable memory: the stream is drained before the copy.
    const auto* copy = std::get_if<trace::Memcpy>(&r);
    const bool sync_copy = copy && (copy->flags & trace::kMemSync);
    if (sync_copy && copy->kind == trace::MemcpyKind::HostToDevice && (copy->flags & trace::kMemPageableHost))
      sim.host = std::max(sim.host, ready);
    OpTime& t = out_.ops[ri][op.seq];
    t.issue = sim.host;
    t.ready = ready;
    const int64_t base = std::max(ready, sim.host);
    if (fitting_ && p.timed) {
      fit_operation(ri, sim, op, p, t, base, host_before);
    } else {
      t.start = base + p.delay;
      if (p.collective && !fitting_) {
        join_collective(ri, sim, op, p, t.start, barrier);
      } else {
        const double f = impl_.scale_of(ri, p, scales_);
        finish_op(ri, sim, op.stream, op.seq, t.start + std::llround(static_cast<double>(p.duration) * f), barrier);
      }
    }
    if (sync_copy && !sim.blocked) {
      const auto k = copy->kind;
      if (k == trace::MemcpyKind::DeviceToHost || k == trace::MemcpyKind::HostToHost ||
          k == trace::MemcpyKind::Default ||
          (k == trace::MemcpyKind::HostToDevice && !(copy->flags & trace::kMemPageableHost)))
        sim.host = std::max(sim.host, out_.ops[ri][op.seq].end);
    }
  }

  // The fit: a timed operation runs as measured; the wait before its start is a host gap where
  // the GPU sat idle (the host issued it late), else its launch delay.
  void fit_operation(size_t ri, Sim& sim, const trace::OpCommon& op, OpParams& p, OpTime& t, int64_t base,
                     int64_t host_before) {
    RankInfo& info = impl_.ranks[ri];
    const Measured m = info.timing[op.seq];
    const int64_t slack = m.start - base;
    const uint32_t device = info.streams[op.stream].device;
    if (slack > impl_.options.host_gap_threshold_ns && !info.busy[device].busy(base, m.start)) {
      info.gap[op.seq] = m.start - host_before;
      sim.host = t.issue = m.start;
      p.delay = 0;
    } else {
      p.delay = slack;  // waited on the GPU (launch latency, other streams' kernels)
    }
    t.start = m.start;
    finish_op(ri, sim, op.stream, op.seq, m.end, true);
  }

  void join_collective(size_t ri, Sim& sim, const trace::OpCommon& op, const OpParams& p, int64_t start, bool barrier) {
    Coll& c = colls_[CollectiveKey{p.comm, p.comm_seq}];
    c.nranks = p.nranks;
    c.starts[ri] = {start, op.seq};
    sim.blocked = true;
    sim.key = CollectiveKey{p.comm, p.comm_seq};
    sim.seq = op.seq;
    sim.stream = op.stream;
    sim.barrier = barrier;
    if (c.starts.size() >= c.nranks) {
      c.resolved = true;
      for (const auto& [rj, s] : c.starts) c.last = std::max(c.last, s.first);
    }
  }

  // Event records and waits, host synchronisations, frees, captures.
  void on_call(size_t ri, Sim& sim, const trace::Record& r) {
    std::visit([&](const auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, trace::EventRecord>) {
        StreamSim& st = stream_of(ri, sim, x.stream);
        if (!st.capturing) sim.events[x.event] = std::max({st.tail, st.floor, sim.host});
      } else if constexpr (std::is_same_v<T, trace::EventWait>) {
        auto it = sim.events.find(x.event);
        StreamSim& st = stream_of(ri, sim, x.stream);
        const int64_t tail = std::max(st.tail, st.floor);
        out_.syncs[ri][x.seq] = {sim.host, it != sim.events.end() ? it->second : kNone, tail};
        if (it != sim.events.end() && !st.capturing) st.floor = std::max(st.floor, it->second);
      } else if constexpr (std::is_same_v<T, trace::EventSync>) {
        auto it = sim.events.find(x.event);
        const int64_t call = sim.host;
        if (it != sim.events.end()) sim.host = std::max(sim.host, it->second);
        out_.syncs[ri][x.seq] = {call, sim.host, 0};
      } else if constexpr (std::is_same_v<T, trace::StreamSync>) {
        const int64_t call = sim.host;
        StreamSim& st = stream_of(ri, sim, x.stream);
        sim.host = std::max({sim.host, st.tail, st.floor});
        out_.syncs[ri][x.seq] = {call, sim.host, 0};
      } else if constexpr (std::is_same_v<T, trace::DeviceSync>) {
        const int64_t call = sim.host;
        sim.host = std::max(sim.host, device_tail(sim, x.device, false));
        out_.syncs[ri][x.seq] = {call, sim.host, 0};
      } else if constexpr (std::is_same_v<T, trace::Free>) {
        if (x.kind == trace::AllocKind::Device || x.kind == trace::AllocKind::Managed)
          sim.host = std::max(sim.host, device_tail(sim, 0, true));
      } else if constexpr (std::is_same_v<T, trace::CaptureBegin>) {
        stream_of(ri, sim, x.stream).capturing = true;
      } else if constexpr (std::is_same_v<T, trace::CaptureEnd>) {
        stream_of(ri, sim, x.stream).capturing = false;
      }
    }, r);
  }

  // A collective every rank has started: the blocked rank's part ends its own duration after
  // the last start.
  void resume(size_t ri, const Coll& c) {
    Sim& sim = sims_[ri];
    const OpParams& p = impl_.ranks[ri].ops[sim.seq];
    const int64_t end = c.last + std::llround(static_cast<double>(p.own) * impl_.scale_of(ri, p, scales_));
    finish_op(ri, sim, sim.stream, sim.seq, std::max(end, out_.ops[ri][sim.seq].start), sim.barrier);
    sim.blocked = false;
  }

  // No rank moved: a collective some rank never reaches ends with the starts known.
  void end_unreached_collectives() {
    for (auto& [key, c] : colls_)
      if (!c.resolved && !c.starts.empty()) {
        c.resolved = true;
        for (const auto& [rj, s] : c.starts) c.last = std::max(c.last, s.first);
      }
  }

  Impl& impl_;
  const std::vector<RankRecords>& records_;
  const std::vector<DurationScale>* scales_;
  const bool fitting_;
  const std::set<std::pair<int, uint64_t>>* no_barrier_;
  std::vector<RankSeqs> no_barrier_here_;  // each rank's part of it, asked at every operation
  const std::vector<RecordInserts>* inserts_;
  Schedule out_;
  std::vector<Sim> sims_;
  std::map<CollectiveKey, Coll> colls_;
};

Schedule Replayer::Impl::simulate(const std::vector<RankRecords>& records, const std::vector<DurationScale>* scales,
                                  bool fitting, const std::set<std::pair<int, uint64_t>>* no_barrier,
                                  const std::vector<RecordInserts>* inserts) {
  return Simulation(*this, records, scales, fitting, no_barrier, inserts).run();
}

void Replayer::Impl::step_times(Schedule& s) const {
  s.rank_step_ns.assign(ranks.size(), 0);
  s.step_windows.assign(ranks.size(), {});
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = kNone;
  int instances_used = 0;
  for (size_t ri = 0; ri < ranks.size(); ++ri) {
    s.ops[ri].for_each([&](uint64_t, const OpTime& t) {
      lo = std::min(lo, t.start);
      hi = std::max(hi, t.end);
    });
    const auto& steps = ranks[ri].steps;
    if (steps.empty()) continue;
    const size_t first = steps.size() >= 2 && options.first_step_warmup ? 1 : 0;  // the first of several is warm-up
    int64_t total = 0;
    for (size_t i = first; i < steps.size(); ++i) {
      int64_t a = std::numeric_limits<int64_t>::max(), b = kNone;
      for (uint64_t seq : steps[i])
        if (const OpTime* t = s.ops[ri].find(seq)) {
          a = std::min(a, t->start);
          b = std::max(b, t->end);
        }
      if (b > a) {
        total += b - a;
        s.step_windows[ri].push_back({a, b});
      }
    }
    instances_used = static_cast<int>(steps.size() - first);
    s.rank_step_ns[ri] = total / static_cast<int64_t>(steps.size() - first);
  }
  s.measured_steps = instances_used;
  s.step_ns = 0;
  for (int64_t v : s.rank_step_ns) s.step_ns = std::max(s.step_ns, v);
  if (instances_used == 0 && hi > lo) {  // no step range: the whole run
    s.step_ns = hi - lo;
    std::fill(s.rank_step_ns.begin(), s.rank_step_ns.end(), hi - lo);
    for (auto& w : s.step_windows) w = {{lo, hi}};
  }
}

void Replayer::Impl::fit() {
  measured = simulate(run, nullptr, true);
  size_t steps = 0, period = 0;
  for (const RankInfo& r : ranks) {
    steps = std::max(steps, r.steps.size());
    period = std::max(period, r.pattern_period);
  }
  const char* step_time = steps < 2 ? "the one step"
                          : options.first_step_warmup ? "the mean of all but the first (warm-up)"
                                                      : "the mean of all";
  if (steps == 0)
    notes.push_back(fmt::format(
        "no operation ran inside an NVTX range '{}' and no repeating pattern of collectives and host "
        "synchronisations was found: the step time is the whole run",
        options.step_range));
  else if (period)
    notes.push_back(fmt::format("{} step(s) per rank from the repeating pattern of {} collectives and host "
                                "synchronisations (no NVTX range '{}'); step time: {}",
                                steps, period, options.step_range, step_time));
  else
    notes.push_back(fmt::format("{} instance(s) of NVTX range '{}' per rank; step time: {}", steps,
                                options.step_range, step_time));
}

Replayer::Replayer(const std::vector<RankRecords>& run, ReplayOptions options)
    : impl_(std::make_unique<Impl>(std::vector<RankRecords>(run))) {
  impl_->prepare(std::move(options));
}

Replayer::Replayer(const std::vector<RankRecords>* run, ReplayOptions options) : impl_(std::make_unique<Impl>(run)) {
  impl_->prepare(std::move(options));
}

Replayer::~Replayer() = default;

const Schedule& Replayer::measured() const { return impl_->measured; }

Schedule Replayer::run(const std::vector<RankRecords>& edited, const std::vector<DurationScale>& scales,
                       const std::set<std::pair<int, uint64_t>>* no_barrier) const {
  return impl_->simulate(edited, &scales, false, no_barrier);
}

Schedule Replayer::run_unchanged() const { return impl_->simulate(impl_->run, nullptr, false); }

Schedule Replayer::run_in_place(const std::vector<RankRecords>& run, const WhatIf& w,
                               const RecordPlaces* places) const {
  if (!w.drop_kinds.empty()) return this->run(apply_edits(run, w), w.scales, &w.drop);
  const std::vector<RecordInserts> inserts = edit_inserts(run, w, places);
  return impl_->simulate(run, &w.scales, false, &w.drop, &inserts);
}

std::vector<std::string> Replayer::notes() const { return impl_->notes; }

bool Replayer::scales_any(const DurationScale& s) const {
  bool any = false;
  for (size_t ri = 0; ri < impl_->ranks.size() && !any; ++ri)
    impl_->ranks[ri].ops.for_each([&](uint64_t, const OpParams& p) { any = any || impl_->scales(s, ri, p); });
  return any;
}

const std::vector<RankRecords>& Replayer::records() const { return impl_->run; }

std::string Replayer::stream_name(int rank_index, trace::StreamId s) const {
  return impl_->stream_label(static_cast<size_t>(rank_index), s);
}

}  // namespace streamhaz::analysis
