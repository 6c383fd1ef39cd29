#include "html_timeline_data.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "streamhaz/report/report_input.h"

namespace streamhaz::report {
namespace {

using nlohmann::json;

constexpr size_t kFindingsWithDetail = 64;  // findings whose neighbourhood is kept in detail

class Strings {
 public:
  uint32_t id(const std::string& s) {
    auto [it, added] = ids_.try_emplace(s, static_cast<uint32_t>(list_.size()));
    if (added) list_.push_back(s);
    return it->second;
  }
  json take() { return json(std::move(list_)); }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> list_;
};

uint64_t min_start(const RankTimeline& r) {
  uint64_t t = std::numeric_limits<uint64_t>::max();
  for (const TimelineOp& op : r.ops) t = std::min(t, op.start_ns);
  return r.ops.empty() ? 0 : t;
}

// Which ops are drawn one by one: all within budget, else windows (in issue order) around
// the findings' operations, then each rank's first operations up to the budget.
std::vector<std::vector<char>> detail_masks(const ReportInput& input, const Timeline& timeline, uint64_t budget) {
  std::vector<std::vector<char>> masks;
  const bool all = timeline.total_ops() <= budget;
  for (const RankTimeline& r : timeline.ranks) masks.emplace_back(r.ops.size(), all ? 1 : 0);
  if (all) return masks;
  const auto& findings = input.analysis.findings;
  const size_t n = std::min(findings.size(), kFindingsWithDetail);
  const int64_t half = static_cast<int64_t>(std::max<uint64_t>(16, budget / (4 * std::max<size_t>(n, 1))));
  for (size_t i = 0; i < n; ++i) {
    for (const analysis::OpRef* op : {&findings[i].first, &findings[i].second}) {
      const int64_t ri = timeline.rank_index(op->rank);
      const int64_t at = ri < 0 ? -1 : timeline.find_op(ri, op->seq);
      if (at < 0) continue;
      auto& mask = masks[ri];
      const int64_t lo = std::max<int64_t>(0, at - half), hi = std::min<int64_t>(int64_t(mask.size()), at + half + 1);
      std::fill(mask.begin() + lo, mask.begin() + hi, 1);
    }
  }
  // What the budget leaves is spent on each rank's first operations (the run's start).
  uint64_t marked = 0;
  for (const auto& m : masks) marked += std::count(m.begin(), m.end(), 1);
  const uint64_t share = budget > marked ? (budget - marked) / std::max<size_t>(masks.size(), 1) : 0;
  for (auto& m : masks) {
    uint64_t left = share;
    for (size_t i = 0; i < m.size() && left; ++i)
      if (!m[i]) m[i] = 1, --left;
  }
  return masks;
}

}  // namespace

json timeline_data(const ReportInput& input, const Timeline& timeline, uint64_t detail_ops,
                   TimelineDataStats& stats, uint32_t bins_per_rank) {
  stats = {};
  Strings strings;
  strings.id("");
  // Ranks timed on the same host share CUPTI's clock: one origin for all of them.
  uint64_t t0 = std::numeric_limits<uint64_t>::max();
  for (const RankTimeline& r : timeline.ranks)
    if (!r.order_only && !r.ops.empty()) t0 = std::min(t0, min_start(r));
  if (t0 == std::numeric_limits<uint64_t>::max()) t0 = 0;

  const auto masks = detail_masks(input, timeline, detail_ops);
  std::vector<std::vector<int64_t>> drawn_index(timeline.ranks.size());
  json ranks = json::array();
  for (size_t ri = 0; ri < timeline.ranks.size(); ++ri) {
    const RankTimeline& r = timeline.ranks[ri];
    const uint64_t origin = r.order_only ? min_start(r) : t0;
    auto rel = [origin](uint64_t t) { return t > origin ? t - origin : 0; };
    json streams = json::array();
    for (const TimelineStream& s : r.streams) streams.push_back({{"id", s.id}, {"name", s.name}, {"device", s.device}});

    // Operations: stream, seq, start, duration, kind, name, nvtx, timed (flat, 8 per op).
    json ops = json::array();
    auto& index = drawn_index[ri];
    index.assign(r.ops.size(), -1);
    uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
    int64_t drawn = 0;
    for (size_t i = 0; i < r.ops.size(); ++i) {
      const TimelineOp& op = r.ops[i];
      if (!masks[ri][i]) {
        lo = std::min(lo, op.start_ns);
        hi = std::max(hi, op.end_ns);
        continue;
      }
      index[i] = drawn++;
      for (uint64_t v : {uint64_t(op.stream), op.seq, rel(op.start_ns), op.end_ns - op.start_ns,
                         uint64_t(strings.id(r.names[op.kind])), uint64_t(strings.id(r.names[op.name])),
                         uint64_t(strings.id(r.names[op.nvtx])), uint64_t(op.timed)})
        ops.push_back(v);
    }
    stats.ops_detailed += drawn;

    // The rest: per stream and time bin, count and extent (flat: stream, start, end, count).
    json agg = json::array();
    if (uint64_t(drawn) < r.ops.size()) {
      const uint64_t span = std::max<uint64_t>(hi - lo, 1);
      struct Bin {
        uint64_t count = 0, start = 0, end = 0;
      };
      std::vector<Bin> bins(r.streams.size() * bins_per_rank);
      for (size_t i = 0; i < r.ops.size(); ++i) {
        if (masks[ri][i]) continue;
        const TimelineOp& op = r.ops[i];
        const uint64_t b = std::min<uint64_t>(bins_per_rank - 1, (op.start_ns - lo) * bins_per_rank / span);
        Bin& bin = bins[op.stream * bins_per_rank + b];
        if (bin.count++ == 0) bin.start = op.start_ns, bin.end = op.end_ns;
        bin.start = std::min(bin.start, op.start_ns);
        bin.end = std::max(bin.end, op.end_ns);
      }
      for (size_t b = 0; b < bins.size(); ++b) {
        if (!bins[b].count) continue;
        for (uint64_t v : {uint64_t(b / bins_per_rank), rel(bins[b].start), rel(bins[b].end), bins[b].count})
          agg.push_back(v);
        ++stats.bins;
      }
      stats.ops_aggregated += r.ops.size() - drawn;
    }

    json waits = json::array();
    for (const WaitArrow& w : r.waits)
      if (index[w.from] >= 0 && index[w.to] >= 0) waits.push_back(index[w.from]), waits.push_back(index[w.to]);
    json windows = json::array();
    for (const TimeWindow& w : r.timed_windows) windows.push_back(rel(w.start_ns)), windows.push_back(rel(w.end_ns));

    ranks.push_back({{"rank", r.rank},
                     {"path", r.path},
                     {"gpu_times", r.gpu_times},
                     {"order_only", r.order_only},
                     {"ops_total", r.ops.size()},
                     {"untimed", r.untimed_ops},
                     {"streams", std::move(streams)},
                     {"ops", std::move(ops)},
                     {"agg", std::move(agg)},
                     {"waits", std::move(waits)},
                     {"windows", std::move(windows)}});
  }

  // Each finding's two operations as [rank index, drawn op index] (-1 when not drawn).
  json findings = json::array();
  for (const analysis::Finding& f : input.analysis.findings) {
    json ops = json::array();
    for (const analysis::OpRef* op : {&f.first, &f.second}) {
      const int64_t ri = timeline.rank_index(op->rank);
      const int64_t at = ri < 0 ? -1 : timeline.find_op(ri, op->seq);
      ops.push_back({ri, at < 0 ? -1 : drawn_index[ri][at]});
    }
    findings.push_back({{"kind", kind_id(f.kind)}, {"title", f.title}, {"ops", std::move(ops)},
                        {"missing_order", f.missing_order}});
  }
  return {{"strings", strings.take()}, {"ranks", std::move(ranks)}, {"findings", std::move(findings)}};
}

}  // namespace streamhaz::report
