#include "sync/manifestation.h"

#include <fmt/format.h>

namespace streamhaz::analysis {

void add_manifestation(std::vector<Finding>& races, const std::vector<const CostRun*>& runs) {
  for (Finding& f : races) {
    if (f.kind != FindingKind::Race || f.second.on_host || f.first.on_host) continue;
    const CostRun* on = nullptr;
    size_t ri = 0;
    for (const CostRun* c : runs) {
      for (size_t i = 0; i < c->run->size() && !on; ++i)
        if ((*c->run)[i].rank == f.first.rank && c->unchanged->ops[i].contains(f.first.seq) &&
            c->unchanged->ops[i].contains(f.second.seq)) {
          on = c;
          ri = i;
        }
      if (on) break;
    }
    if (!on) continue;  // outside the judged steps: not replayed
    const std::vector<RankRecords>& run = *on->run;
    const Replayer& replay = *on->replay;
    const Schedule& unchanged = *on->unchanged;
    auto overlap = [&](double factor) {
      const Schedule s = factor == 1.0 ? unchanged : replay.run(run, {DurationScale{f.first.stream_name, "", factor}});
      const OpTime *a = s.ops[ri].find(f.first.seq), *b = s.ops[ri].find(f.second.seq);
      if (!a || !b) return false;
      // The later operation starts before the earlier one has ended: they overlap, or run
      // the other way round; either way the bytes are no longer accessed in issue order.
      return b->start < a->end;
    };
    std::string text;
    if (overlap(1.0)) {
      text = "in the replay of the captured run the later operation already starts before the earlier one ends";
    } else if (!overlap(64.0)) {
      text = fmt::format("the replay keeps the two operations in issue order even with {} 64x slower",
                         f.first.stream_name);
    } else {
      double lo = 1.0, hi = 64.0;
      for (int i = 0; i < 20 && hi - lo > 0.005; ++i) {
        const double mid = (lo + hi) / 2;
        (overlap(mid) ? hi : lo) = mid;
      }
      text = fmt::format("manifests once {} runs {:.2f}x slower (replay: the later operation then starts before "
                         "the earlier one ends)",
                         f.first.stream_name, hi);
    }
    f.detail = f.detail.empty() ? text : f.detail + "; " + text;
  }
}

}  // namespace streamhaz::analysis
