#include "timeline_placement.h"

#include <algorithm>

namespace streamhaz::report {
namespace {

constexpr uint64_t kNsPerCall = 1000;  // spacing of ops placed by order beyond the last timed one

struct Anchor {
  uint64_t seq, start, end;
};

// Linear in seq between the timed ops issued just before and just after.
uint64_t estimate(const std::vector<Anchor>& anchors, uint64_t seq) {
  auto next = std::lower_bound(anchors.begin(), anchors.end(), seq,
                               [](const Anchor& a, uint64_t s) { return a.seq < s; });
  if (next == anchors.begin()) {
    const uint64_t back = (next->seq - seq) * kNsPerCall;
    return next->start > back ? next->start - back : 0;
  }
  const Anchor& prev = *(next - 1);
  if (next == anchors.end()) return prev.end + (seq - prev.seq) * kNsPerCall;
  if (next->start <= prev.start) return prev.start;
  const double f = double(seq - prev.seq) / double(next->seq - prev.seq);
  return prev.start + static_cast<uint64_t>(f * double(next->start - prev.start));
}

void find_windows(RankTimeline& rank) {
  bool open = false;
  TimeWindow w;
  auto close = [&] {
    if (!open) return;
    if (!rank.timed_windows.empty() && w.start_ns <= rank.timed_windows.back().end_ns)
      rank.timed_windows.back().end_ns = std::max(rank.timed_windows.back().end_ns, w.end_ns);
    else
      rank.timed_windows.push_back(w);
    open = false;
  };
  for (const TimelineOp& op : rank.ops) {
    if (!op.timed) {
      close();
      continue;
    }
    if (!open) w = {op.start_ns, op.end_ns};
    w.start_ns = std::min(w.start_ns, op.start_ns);
    w.end_ns = std::max(w.end_ns, op.end_ns);
    open = true;
  }
  close();
  std::sort(rank.timed_windows.begin(), rank.timed_windows.end(),
            [](const TimeWindow& a, const TimeWindow& b) { return a.start_ns < b.start_ns; });
}

}  // namespace

void place_untimed_ops(RankTimeline& rank) {
  std::vector<Anchor> anchors;
  rank.untimed_ops = 0;
  for (const TimelineOp& op : rank.ops) {
    if (op.timed) anchors.push_back({op.seq, op.start_ns, op.end_ns});
    else ++rank.untimed_ops;
  }
  if (rank.untimed_ops == 0) return;
  if (anchors.empty()) {
    rank.order_only = true;
    for (TimelineOp& op : rank.ops) {
      op.start_ns = op.seq * kNsPerCall;
      op.end_ns = op.start_ns;
    }
    return;
  }
  std::sort(anchors.begin(), anchors.end(), [](const Anchor& a, const Anchor& b) { return a.seq < b.seq; });
  // Streams run in order: an op placed by order never starts before its stream's previous op ended.
  std::vector<uint64_t> stream_end(rank.streams.size(), 0);
  for (TimelineOp& op : rank.ops) {
    if (!op.timed) {
      op.start_ns = std::max(estimate(anchors, op.seq), stream_end[op.stream]);
      op.end_ns = op.start_ns;
    }
    stream_end[op.stream] = std::max(stream_end[op.stream], op.end_ns);
  }
  find_windows(rank);
}

}  // namespace streamhaz::report
