#include "clock/receipts.h"

#include <algorithm>

namespace streamhaz::analysis {

void Receipts::add(TimelineId timeline, ClockValue value, Known knowledge) {
  if (!knowledge.frontier && !knowledge.promise) return;
  if (timeline >= by_timeline_.size()) by_timeline_.resize(timeline + 1);
  by_timeline_[timeline].at.emplace_back(value, std::move(knowledge));  // ticks only grow
}

void Receipts::known(const VectorClock& clock, std::vector<Known>& out) const {
  const size_t first = out.size();
  for (TimelineId t = 0; t < by_timeline_.size(); ++t) {
    const auto& at = by_timeline_[t].at;
    if (at.empty()) continue;
    const ClockValue c = clock.get(t);
    if (at.back().first <= c) {  // the usual case: the clock knows the timeline's latest receipt
      out.push_back(at.back().second);
      continue;
    }
    auto it = std::upper_bound(at.begin(), at.end(), c,
                               [](ClockValue v, const std::pair<ClockValue, Known>& e) { return v < e.first; });
    if (it == at.begin()) continue;
    out.push_back(std::prev(it)->second);
  }
  if (first == 0) {
    settle_known(out);
  } else if (out.size() > first) {
    mine_.assign(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    settle_known(mine_);
    out.resize(first);
    out.insert(out.end(), mine_.begin(), mine_.end());
  }
}

bool Receipts::wants_pruning(TimelineId timeline) const {
  return timeline < by_timeline_.size() && by_timeline_[timeline].at.size() >= by_timeline_[timeline].prune_at;
}

void Receipts::prune(TimelineId timeline, std::vector<ClockValue>& live) {
  if (timeline >= by_timeline_.size()) return;
  Table& table = by_timeline_[timeline];
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  std::vector<std::pair<ClockValue, Known>>& kept = kept_;
  kept.clear();
  size_t i = 0;
  for (ClockValue v : live) {
    // The latest receipt at or below v: what a clock with value v looks up.
    while (i < table.at.size() && table.at[i].first <= v) ++i;
    if (i == 0) continue;
    if (kept.empty() || kept.back().first != table.at[i - 1].first) kept.push_back(table.at[i - 1]);
  }
  table.at.swap(kept);
  kept.clear();  // the frontiers no clock can look up are released here
  table.prune_at = std::max<size_t>(16, 2 * table.at.size());
}

}  // namespace streamhaz::analysis
