// Trace Event Format details that Perfetto's JSON importer relies on:
// - ts and dur are microseconds (fractions keep nanoseconds);
// - complete events ("X") on one thread track must nest, never partly overlap: an operation
//   starting before its stream's previous one ended is moved to that end;
// - a flow's "s" and "f" share cat, name and id; "f" carries bp "e" so that both ends bind to
//   the slice enclosing their ts, which is therefore the middle of each end's slice;
// - "M" events name processes and threads and give their sort order.
#include "streamhaz/report/perfetto_export.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "streamhaz/report/report_input.h"

namespace streamhaz::report {
namespace {

using nlohmann::json;

constexpr uint64_t kMinDurNs = 1;  // ops without a GPU time: a visible, bindable sliver

class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) { out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"; }
  void write(const json& event) {
    if (!first_) out_ << ",\n";
    first_ = false;
    out_ << event.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  void finish() { out_ << "\n]}\n"; }

 private:
  std::ostream& out_;
  bool first_ = true;
};

double us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

// The slice an operation became: track and clamped interval.
struct Slice {
  int pid = 0, tid = 0;
  uint64_t start = 0, end = 0;  // ns from the origin
};

const char* op_category(OpClass c) {
  switch (c) {
    case OpClass::Kernel: return "kernel";
    case OpClass::Memcpy: return "memcpy";
    case OpClass::Memset: return "memset";
    case OpClass::Nccl: return "nccl";
    case OpClass::HostFunc: return "host_func";
    case OpClass::GraphLaunch: return "graph";
  }
  return "operation";
}

int stream_tid(uint32_t stream_index) { return static_cast<int>(stream_index) * 2 + 1; }
int nvtx_tid(uint32_t stream_index) { return static_cast<int>(stream_index) * 2 + 2; }

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

class Exporter {
 public:
  Exporter(std::ostream& out, const Timeline& timeline) : w_(out), timeline_(timeline) {}

  PerfettoStats run(const std::vector<analysis::Finding>& findings) {
    uint64_t t0 = std::numeric_limits<uint64_t>::max();
    for (const RankTimeline& r : timeline_.ranks)
      for (const TimelineOp& op : r.ops)
        if (!r.order_only) t0 = std::min(t0, op.start_ns);
    if (t0 == std::numeric_limits<uint64_t>::max()) t0 = 0;
    slices_.resize(timeline_.ranks.size());
    for (size_t ri = 0; ri < timeline_.ranks.size(); ++ri) {
      const RankTimeline& r = timeline_.ranks[ri];
      uint64_t origin = t0;
      if (r.order_only) {
        origin = std::numeric_limits<uint64_t>::max();
        for (const TimelineOp& op : r.ops) origin = std::min(origin, op.start_ns);
      }
      write_rank(ri, origin);
    }
    for (size_t ri = 0; ri < timeline_.ranks.size(); ++ri)
      for (const WaitArrow& a : timeline_.ranks[ri].waits)
        flow("wait", "cudaStreamWaitEvent", slices_[ri][a.from], slices_[ri][a.to], {{"wait_seq", a.wait_seq}});
    write_collective_flows();
    for (const analysis::Finding& f : findings) write_finding(f);
    w_.finish();
    return stats_;
  }

 private:
  void meta(int pid, int tid, const char* name, json args) {
    json e = {{"ph", "M"}, {"pid", pid}, {"name", name}, {"args", std::move(args)}};
    if (tid >= 0) e["tid"] = tid;
    w_.write(e);
  }

  void write_rank(size_t ri, uint64_t origin) {
    const RankTimeline& r = timeline_.ranks[ri];
    const int pid = r.rank + 1;  // pid 0 is special to some viewers
    std::string label = fmt::format("rank {} ({})", r.rank, r.path);
    if (r.order_only) label += ", no GPU times: placed by API order";
    else if (r.untimed_ops) label += fmt::format(", {} of {} operations placed by API order", r.untimed_ops, r.ops.size());
    meta(pid, -1, "process_name", {{"name", label}});
    meta(pid, -1, "process_sort_index", {{"sort_index", r.rank}});

    // Per stream, in time order, clamped so the stream's slices never partly overlap.
    std::vector<std::vector<uint32_t>> by_stream(r.streams.size());
    for (uint32_t i = 0; i < r.ops.size(); ++i) by_stream[r.ops[i].stream].push_back(i);
    auto& slices = slices_[ri];
    slices.assign(r.ops.size(), {});
    for (uint32_t si = 0; si < r.streams.size(); ++si) {
      auto& list = by_stream[si];
      if (list.empty()) continue;
      const TimelineStream& s = r.streams[si];
      const std::string name = fmt::format("{} (id {})", s.name, s.id);
      meta(pid, stream_tid(si), "thread_name", {{"name", name}});
      meta(pid, stream_tid(si), "thread_sort_index", {{"sort_index", stream_tid(si)}});
      std::stable_sort(list.begin(), list.end(),
                       [&](uint32_t a, uint32_t b) { return r.ops[a].start_ns < r.ops[b].start_ns; });
      uint64_t stream_end = 0;
      for (uint32_t i : list) {
        const TimelineOp& op = r.ops[i];
        const uint64_t rel = op.start_ns > origin ? op.start_ns - origin : 0;
        Slice sl{pid, stream_tid(si), std::max(rel, stream_end), 0};
        sl.end = sl.start + std::max(op.end_ns - op.start_ns, kMinDurNs);
        stream_end = sl.end;
        slices[i] = sl;
        json args = {{"seq", op.seq}, {"kind", r.names[op.kind]}, {"stream", s.id}};
        if (op.nvtx) args["nvtx"] = r.names[op.nvtx];
        if (!op.timed) args["gpu_time"] = "none recorded: placed by API order";
        w_.write({{"ph", "X"}, {"pid", pid}, {"tid", sl.tid}, {"ts", us(sl.start)}, {"dur", us(sl.end - sl.start)},
                  {"name", r.names[op.name].empty() ? r.names[op.kind] : r.names[op.name]},
                  {"cat", op_category(op.cls)}, {"args", std::move(args)}});
        ++stats_.slices;
      }
      write_nvtx_track(r, si, list, pid, name);
    }
  }

  // NVTX ranges from each operation's range path: consecutive operations of the stream that
  // share a path prefix form one slice per level, nested by construction.
  void write_nvtx_track(const RankTimeline& r, uint32_t si, const std::vector<uint32_t>& list, int pid,
                        const std::string& stream_label) {
    struct Open {
      std::string_view name;
      uint64_t start, end;
    };
    std::vector<Open> open;
    std::vector<json> out;
    const auto& slices = slices_[&r - timeline_.ranks.data()];
    auto close_to = [&](size_t depth) {
      while (open.size() > depth) {
        const Open& o = open.back();
        out.push_back({{"ph", "X"}, {"pid", pid}, {"tid", nvtx_tid(si)}, {"ts", us(o.start)}, {"dur", us(o.end - o.start)},
                       {"name", std::string(o.name)}, {"cat", "nvtx"}, {"args", {{"depth", open.size() - 1}}}});
        open.pop_back();
      }
    };
    for (uint32_t i : list) {
      const auto parts = split_path(r.names[r.ops[i].nvtx]);
      size_t same = 0;
      while (same < open.size() && same < parts.size() && open[same].name == parts[same]) ++same;
      close_to(same);
      const Slice& sl = slices[i];
      for (size_t d = same; d < parts.size(); ++d) open.push_back({parts[d], sl.start, sl.end});
      for (Open& o : open) o.end = std::max(o.end, sl.end);
    }
    close_to(0);
    if (out.empty()) return;
    meta(pid, nvtx_tid(si), "thread_name", {{"name", stream_label + " NVTX ranges"}});
    meta(pid, nvtx_tid(si), "thread_sort_index", {{"sort_index", nvtx_tid(si)}});
    // Parents before children at the same start: the viewer nests by order of arrival.
    std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
      const double ta = a["ts"], tb = b["ts"];
      return ta != tb ? ta < tb : a["args"]["depth"].get<size_t>() < b["args"]["depth"].get<size_t>();
    });
    for (const json& e : out) w_.write(e);
    stats_.slices += out.size();
  }

  void flow(const char* cat, const std::string& name, const Slice& from, const Slice& to, json args) {
    const uint64_t id = ++flow_id_;
    w_.write({{"ph", "s"}, {"id", id}, {"cat", cat}, {"name", name}, {"pid", from.pid}, {"tid", from.tid},
              {"ts", us(from.start) + us(from.end - from.start) / 2}, {"args", args}});
    w_.write({{"ph", "f"}, {"bp", "e"}, {"id", id}, {"cat", cat}, {"name", name}, {"pid", to.pid}, {"tid", to.tid},
              {"ts", us(to.start) + us(to.end - to.start) / 2}, {"args", std::move(args)}});
    ++stats_.flows;
  }

  // An NCCL call's parts on every rank, linked from the lowest rank's part.
  void write_collective_flows() {
    std::map<std::pair<uint64_t, uint64_t>, std::vector<std::pair<size_t, uint32_t>>> calls;
    for (size_t ri = 0; ri < timeline_.ranks.size(); ++ri)
      for (const CollectiveCall& c : timeline_.ranks[ri].collectives) calls[{c.comm, c.comm_seq}].push_back({ri, c.op});
    for (const auto& [key, parts] : calls) {
      for (size_t k = 1; k < parts.size(); ++k) {
        if (parts[k].first == parts[0].first) continue;  // the same rank twice: not a match
        const RankTimeline& r = timeline_.ranks[parts[0].first];
        flow("nccl", r.names[r.ops[parts[0].second].kind], slices_[parts[0].first][parts[0].second],
             slices_[parts[k].first][parts[k].second],
             {{"comm", fmt::format("{:#x}", key.first)}, {"comm_seq", key.second}});
      }
    }
  }

  const Slice* slice_of(const analysis::OpRef& op) {
    const int64_t ri = timeline_.rank_index(op.rank);
    const int64_t i = ri < 0 ? -1 : timeline_.find_op(static_cast<size_t>(ri), op.seq);
    return i < 0 ? nullptr : &slices_[ri][i];
  }

  // A marker on the later operation, and the missing order as a flow between the two.
  void write_finding(const analysis::Finding& f) {
    const Slice* a = slice_of(f.first);
    const Slice* b = slice_of(f.second);
    json args = {{"kind", kind_id(f.kind)}, {"key", f.key}, {"missing_order", f.missing_order},
                 {"buffer", f.buffer.name}, {"occurrences", f.occurrences},
                 {"first", fmt::format("rank {} seq {} {} on {}", f.first.rank, f.first.seq, f.first.kind, f.first.stream_name)},
                 {"second", fmt::format("rank {} seq {} {} on {}", f.second.rank, f.second.seq, f.second.kind, f.second.stream_name)}};
    if (!f.detail.empty()) args["detail"] = f.detail;
    const Slice* at = b ? b : a;
    if (at) {
      w_.write({{"ph", "i"}, {"s", "t"}, {"pid", at->pid}, {"tid", at->tid}, {"ts", us(at->start)},
                {"name", std::string(kind_id(f.kind)) + ": " + f.title}, {"cat", "finding"}, {"args", args}});
      ++stats_.instants;
    }
    if (a && b) flow("finding", "missing order: " + f.title, *a, *b, std::move(args));
  }

  EventWriter w_;
  const Timeline& timeline_;
  std::vector<std::vector<Slice>> slices_;
  uint64_t flow_id_ = 0;
  PerfettoStats stats_;
};

}  // namespace

PerfettoStats write_perfetto_trace(std::ostream& out, const Timeline& timeline,
                                   const std::vector<analysis::Finding>& findings) {
  return Exporter(out, timeline).run(findings);
}

}  // namespace streamhaz::report
