// Reading traces into the timeline model: operations, stream names, event-wait arrows, NCCL
// calls and GPU intervals. Untimed operations are placed afterwards (timeline_placement.cpp).
#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "streamhaz/report/stack_text.h"
#include "streamhaz/report/timeline.h"
#include "streamhaz/trace/reader.h"
#include "timeline_placement.h"

namespace streamhaz::report {
namespace {

using namespace streamhaz::trace;

const char* memcpy_kind_text(MemcpyKind k) {
  static constexpr const char* names[] = {"memcpy HtoH", "memcpy HtoD", "memcpy DtoH",
                                          "memcpy DtoD", "memcpy",      "memcpy peer"};
  const auto i = static_cast<size_t>(k);
  return i < std::size(names) ? names[i] : "memcpy";
}

class RankLoader {
 public:
  explicit RankLoader(RankTimeline& out) : out_(out) { out_.names.emplace_back(); }

  void load(TraceReader& reader) {
    Record r;
    while (reader.next(r)) std::visit([this](const auto& rec) { on(rec); }, r);
    const auto& header = reader.header();
    out_.gpu_times = header.contains("gpu_times") && header["gpu_times"].is_string()
                         ? header["gpu_times"].get<std::string>()
                         : "all";
    apply_timings();
  }

 private:
  // Records that do not change the timeline.
  template <typename R>
  void on(const R&) {}

  void on(const StringDef& s) { strings_[s.id] = s.text; }
  void on(const StreamCreate& s) { stream_index(s.stream).device = s.device; legacy_[s.stream] = s.flags & kStreamLegacyDefault; }
  void on(const StreamName& s) { stream_names_[s.stream] = s.name; }
  void on(const CaptureBegin& c) { capturing_[c.stream] = true; }
  void on(const CaptureEnd& c) { capturing_[c.stream] = false; }

  void on(const Kernel& k) { add_op(k.op, OpClass::Kernel, "kernel", text(k.name)); }
  void on(const Memcpy& m) {
    add_op(m.op, OpClass::Memcpy, memcpy_kind_text(m.kind), m.flags & kMemSync ? "cudaMemcpy" : "cudaMemcpyAsync");
  }
  void on(const Memset& m) { add_op(m.op, OpClass::Memset, "memset", m.flags & kMemSync ? "cudaMemset" : "cudaMemsetAsync"); }
  void on(const HostFunc& h) { add_op(h.op, OpClass::HostFunc, "host_func", "cudaLaunchHostFunc"); }
  void on(const GraphLaunch& g) { add_op(g.op, OpClass::GraphLaunch, "graph launch", fmt::format("cudaGraphLaunch (graph {})", g.graph)); }
  void on(const Nccl& n) {
    const std::string kind = std::string("nccl") + nccl_call(n.kind);
    if (add_op(n.op, OpClass::Nccl, kind, kind))
      out_.collectives.push_back({n.comm, n.comm_seq, static_cast<uint32_t>(out_.ops.size() - 1)});
  }

  void on(const EventRecord& e) {
    auto last = last_op_.find(e.stream);
    // A record on a stream with no operation yet orders nothing that can be drawn.
    if (last != last_op_.end()) event_after_[e.event] = {last->second, e.stream};
    else event_after_.erase(e.event);
  }
  void on(const EventWait& w) {
    auto ev = event_after_.find(w.event);
    if (ev == event_after_.end() || ev->second.stream == w.stream) return;
    pending_waits_[w.stream].push_back({ev->second.op, 0, w.seq});
  }
  void on(const Timing& t) { timings_.push_back(t); }

  static const char* nccl_call(NcclKind k) {
    return static_cast<size_t>(k) < kNcclKindCount ? nccl_facts(k).short_name : "Call";
  }

  const std::string& text(StringId id) const {
    static const std::string none;
    auto it = strings_.find(id);
    return it != strings_.end() ? it->second : none;
  }

  uint32_t intern(const std::string& s) {
    auto [it, added] = name_ids_.try_emplace(s, static_cast<uint32_t>(out_.names.size()));
    if (added) out_.names.push_back(s);
    return it->second;
  }

  TimelineStream& stream_index(StreamId id) {
    auto [it, added] = stream_slots_.try_emplace(id, static_cast<uint32_t>(out_.streams.size()));
    if (added) out_.streams.push_back({id, {}, 0});
    return out_.streams[it->second];
  }

  // Operations issued while their stream is captured run only when the graph is launched:
  // they are kept only if a launch timed them.
  bool add_op(const OpCommon& op, OpClass cls, const std::string& kind, const std::string& name) {
    stream_index(op.stream);
    TimelineOp t;
    t.seq = op.seq;
    t.stream = stream_slots_[op.stream];
    t.kind = intern(kind);
    t.name = intern(name);
    // Without older tracers' "?" segments; cleaned once per distinct path.
    auto nvtx = nvtx_ids_.find(op.nvtx);
    if (nvtx == nvtx_ids_.end()) nvtx = nvtx_ids_.emplace(op.nvtx, intern(nvtx_path(text(op.nvtx)))).first;
    t.nvtx = nvtx->second;
    t.cls = cls;
    if (capturing_[op.stream]) {
      captured_.push_back(t);
      return false;
    }
    const auto index = static_cast<uint32_t>(out_.ops.size());
    out_.ops.push_back(t);
    last_op_[op.stream] = index;
    if (auto p = pending_waits_.find(op.stream); p != pending_waits_.end()) {
      for (WaitArrow w : p->second) {
        w.to = index;
        out_.waits.push_back(w);
      }
      pending_waits_.erase(p);
    }
    return true;
  }

  void apply_timings() {
    // Ops are in seq order as issued; sort defensively (the arrows keep their op indices).
    const bool sorted = std::is_sorted(out_.ops.begin(), out_.ops.end(),
                                       [](const TimelineOp& a, const TimelineOp& b) { return a.seq < b.seq; });
    std::unordered_map<uint64_t, uint32_t> by_seq;
    if (!sorted)
      for (uint32_t i = 0; i < out_.ops.size(); ++i) by_seq.emplace(out_.ops[i].seq, i);
    auto find = [&](uint64_t seq) -> int64_t {
      if (!sorted) {
        auto it = by_seq.find(seq);
        return it == by_seq.end() ? -1 : int64_t(it->second);
      }
      auto it = std::lower_bound(out_.ops.begin(), out_.ops.end(), seq,
                                 [](const TimelineOp& o, uint64_t s) { return o.seq < s; });
      return it != out_.ops.end() && it->seq == seq ? it - out_.ops.begin() : -1;
    };
    std::map<uint64_t, size_t> captured_by_seq;
    for (size_t i = 0; i < captured_.size(); ++i) captured_by_seq.emplace(captured_[i].seq, i);
    std::vector<TimelineOp> replays;  // a graph launched again times its captured ops again
    for (const Timing& t : timings_) {
      const uint64_t end = std::max(t.start_ns, t.end_ns);
      const int64_t i = find(t.op_seq);
      if (i >= 0 && !out_.ops[i].timed) {
        out_.ops[i].start_ns = t.start_ns;
        out_.ops[i].end_ns = end;
        out_.ops[i].timed = true;
        continue;
      }
      const TimelineOp* base = i >= 0 ? &out_.ops[i] : nullptr;
      if (!base)
        if (auto c = captured_by_seq.find(t.op_seq); c != captured_by_seq.end()) base = &captured_[c->second];
      if (!base) continue;  // a Timing without its operation (cut-off trace): nothing to draw
      TimelineOp copy = *base;
      copy.start_ns = t.start_ns;
      copy.end_ns = end;
      copy.timed = true;
      replays.push_back(copy);
    }
    timings_.clear();
    // Replays go after the issue-ordered ops so the arrow and collective indices stay valid.
    for (const TimelineOp& r : replays) out_.ops.push_back(r);
  }

  RankTimeline& out_;
  std::unordered_map<StringId, std::string> strings_;
  std::unordered_map<StringId, uint32_t> nvtx_ids_;  // trace NVTX string -> interned cleaned path
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::map<StreamId, uint32_t> stream_slots_;
  std::map<StreamId, StringId> stream_names_;
  std::map<StreamId, bool> legacy_;
  std::map<StreamId, bool> capturing_;
  std::unordered_map<StreamId, uint32_t> last_op_;
  struct EventSource {
    uint32_t op;
    StreamId stream;
  };
  std::unordered_map<EventId, EventSource> event_after_;
  std::unordered_map<StreamId, std::vector<WaitArrow>> pending_waits_;
  std::vector<Timing> timings_;
  std::vector<TimelineOp> captured_;

 public:
  void name_streams() {
    for (TimelineStream& s : out_.streams) {
      auto n = stream_names_.find(s.id);
      if (n != stream_names_.end() && !text(n->second).empty()) s.name = text(n->second);
      else if (legacy_[s.id]) s.name = "default stream";
      else s.name = fmt::format("stream {}", s.id);
    }
  }
};

}  // namespace

uint64_t Timeline::total_ops() const {
  uint64_t n = 0;
  for (const RankTimeline& r : ranks) n += r.ops.size();
  return n;
}

uint64_t Timeline::untimed_ops() const {
  uint64_t n = 0;
  for (const RankTimeline& r : ranks) n += r.untimed_ops;
  return n;
}

int64_t Timeline::rank_index(int rank) const {
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].rank == rank) return static_cast<int64_t>(i);
  return -1;
}

int64_t Timeline::find_op(size_t ri, uint64_t seq) const {
  if (ri >= ranks.size()) return -1;
  const auto& ops = ranks[ri].ops;
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].seq == seq) return static_cast<int64_t>(i);
  return -1;
}

Timeline load_timeline(const std::vector<analysis::TraceSummary>& traces) {
  Timeline timeline;
  for (const analysis::TraceSummary& t : traces) {
    RankTimeline rank;
    rank.rank = t.rank;
    rank.path = t.path;
    TraceReader reader(t.path);
    RankLoader loader(rank);
    loader.load(reader);
    loader.name_streams();
    place_untimed_ops(rank);
    timeline.ranks.push_back(std::move(rank));
  }
  std::sort(timeline.ranks.begin(), timeline.ranks.end(),
            [](const RankTimeline& a, const RankTimeline& b) { return a.rank < b.rank; });
  return timeline;
}

}  // namespace streamhaz::report
