#include "sync/oversync_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "sync/minimal_sync.h"

namespace streamhaz::analysis {
namespace {

std::string us(int64_t ns) { return fmt::format("{:.1f} µs", static_cast<double>(ns) / 1000.0); }

std::string signed_pct(int64_t value, int64_t base) {
  if (base <= 0) return "n/a";
  return fmt::format("{:+.1f} %", 100.0 * static_cast<double>(value - base) / static_cast<double>(base));
}

std::vector<int> ranks_of(const SiteGroup& g) {
  std::set<int> ranks;
  for (const SyncSite* s : g.sites) ranks.insert(s->rank);
  return {ranks.begin(), ranks.end()};
}

}  // namespace

const char* verdict_text(SyncJudgement v) {
  switch (v) {
    case SyncJudgement::Redundant: return "orders no conflicting pair that nothing else orders";
    case SyncJudgement::Protects: return "orders conflicting pairs nothing else orders";
    case SyncJudgement::MayProtect:
      return "may order kernels without footprint (or work past the analysed window) that nothing else orders";
    case SyncJudgement::HostRead: return "the host's wait for a copy to host memory it may read";
  }
  return "";
}

Finding oversync_finding(const SiteGroup& g, const SyncVerdict& v, const OversyncReportContext& c) {
  const SyncSite& first = g.first();
  Finding f;
  f.kind = FindingKind::OverSync;
  const bool stronger = g.verdict != SyncJudgement::Redundant;
  const bool barrier = first.kind == SyncKind::LegacyBarrier;
  f.key = v.key + (stronger ? "|stronger than needed" : "|redundant");
  f.title = stronger ? fmt::format("{} is stronger than needed", v.what) : fmt::format("{} protects nothing", v.what);
  f.first = first.text->prev_ref;
  f.second = first.text->next_ref;
  f.sync_rank = first.rank;  // the call judged, for its stack (attach_stacks)
  f.sync_seq = first.seq;
  if (c.measured) {
    for (OpRef* op : {&f.first, &f.second}) {
      const OpTime* t = c.measured->ops[first.rank_index].find(op->seq);
      if (op->seq && t) {
        op->start_ns = static_cast<uint64_t>(std::max<int64_t>(0, t->start));
        op->end_ns = static_cast<uint64_t>(std::max<int64_t>(0, t->end));
      }
    }
  }
  f.first.role = f.second.role = trace::AccessMode::Read;
  if (stronger) {
    const std::set<std::pair<int, uint64_t>> drop = g.instances();
    std::string lines;
    for (const std::string& l : describe_waits(c.run, place_waits(c.run, g.protected_pairs, drop), g.protected_pairs,
                                               c.first_byte, c.places))
      lines += (lines.empty() ? "" : "; ") + l;
    f.missing_order = (barrier ? "issue it on a non-blocking stream (in the same order) and order what it "
                                 "protects with event waits: "
                               : "replace it by event waits: ") +
                      lines;
  } else if (barrier) {
    f.missing_order = "issue it on a non-blocking stream (in the same order): the rest of the synchronisation orders "
                      "the same pairs";
  } else {
    f.missing_order = "remove it: the rest of the synchronisation orders the same pairs";
  }
  f.occurrences = v.instances;
  f.ranks = ranks_of(g);
  f.tier = c.tier;
  f.exact = true;
  f.detail = fmt::format(
      "{} {}; {}; stalled {} per step in the captured run ({:.1f} % of the {} step); the replay predicts a step "
      "of {} {} ({}); verdict on {}-tier footprints{}",
      v.what, v.where, verdict_text(g.verdict), us(v.stall_ns_per_step),
      v.step_ns ? 100.0 * static_cast<double>(v.stall_ns_per_step) / static_cast<double>(v.step_ns) : 0.0,
      us(v.step_ns), us(v.step_without_ns), stronger ? "with the minimal waits instead" : "without it",
      signed_pct(v.step_without_ns, v.step_ns), trace::to_string(c.tier),
      c.unfootprinted_kernels == 0
          ? ""
          : fmt::format(", kernels without footprint taken to touch all memory ({} of them ordered by it)",
                        v.unfootprinted));
  return f;
}

std::string oversync_note(const SiteGroup& g, const SyncVerdict& v, bool costed) {
  std::string cost;
  if (costed && v.step_without_ns)
    cost = fmt::format("; stall {} per step, step {} {} ({})", us(v.stall_ns_per_step),
                       v.replaced ? "with minimal waits" : "without it", us(v.step_without_ns),
                       signed_pct(v.step_without_ns, v.step_ns));
  else if (costed)
    cost = fmt::format("; stall {} per step", us(v.stall_ns_per_step));
  std::string extra;
  if (g.verdict == SyncJudgement::MayProtect) extra = fmt::format(" ({} kernel(s) without footprint)", v.unfootprinted);
  if (g.verdict == SyncJudgement::Protects) extra = fmt::format(" ({} pair(s))", v.pairs);
  const std::vector<int> ranks = ranks_of(g);
  return fmt::format("{} {} [{}x, {}{}]: {}{}{}", v.what, v.where, v.instances, ranks.size() == 1 ? "rank " : "ranks ",
                     fmt::join(ranks, ", "), verdict_text(g.verdict), extra, cost);
}

}  // namespace streamhaz::analysis
