// RankEngine, reporting: a conflict found in shadow memory turned into a finding (the bytes
// located in their buffer, both operations named, repeats folded). In the engine because it
// reads the rank's streams, strings and allocations; the finding's words come from
// findings/race_finding.h. The per-rank pattern table keeps repeats cheap (integers only); a
// finding is built once per pattern and rank.
#include <fmt/format.h>

#include "engine/rank_engine.h"
#include "findings/race_finding.h"

namespace streamhaz::analysis {
namespace {

using trace::AccessMode;

uint64_t pack_op(const OpStamp& op, AccessMode role) {
  return (uint64_t(op.kind) << 56) | (uint64_t(role) << 48) | (uint64_t(op.flags) << 40) | op.stream_slot;
}
uint64_t pack_names(const OpStamp& op) { return (uint64_t(op.name) << 32) | op.nvtx; }

// A pointer-tier side whose calling convention says it writes (operand_roles.h in the tracer).
bool directed_write(const OpStamp& op, AccessMode role) {
  return op.tier == trace::FootprintTier::Pointer && role == AccessMode::Write;
}

}  // namespace

const std::string& RankEngine::text(trace::StringId id) const {
  static const std::string none;
  auto it = strings_.find(id);
  return it != strings_.end() ? it->second : none;
}

std::string RankEngine::stream_label(uint32_t slot) const {
  if (slot == kHostSlot) return "host";
  const StreamState& s = streams_[slot];
  std::string label;
  if (s.name && !text(s.name).empty()) label = text(s.name);
  else if (s.legacy()) label = "default stream";
  else if (s.flags & trace::kStreamPerThreadDefault) label = "per-thread default stream";
  else label = fmt::format("stream {}", s.id);
  if (s.graph) label += fmt::format(" (graph {})", s.graph);
  return label;
}

OpRef RankEngine::describe(const OpStamp& op, AccessMode role) const {
  OpRef ref;
  ref.rank = rank_;
  ref.seq = op.seq;
  ref.kind = op_kind_text(op.kind);
  ref.name = op.kind == OpKind::Kernel ? text(op.name) : op_api_name(op.kind, op.flags);
  ref.on_host = op.stream_slot == kHostSlot;
  ref.stream = ref.on_host ? 0 : streams_[op.stream_slot].id;
  ref.stream_name = stream_label(op.stream_slot);
  ref.nvtx = text(op.nvtx);
  ref.role = role;
  return ref;
}

void RankEngine::report(const Conflict& c, const OpStamp& second, AccessMode second_role, bool possible) {
  // The over-sync pass: a pair that is only possible (pointer tier) still counts as protected.
  if (options_.on_conflict) options_.on_conflict(rank_, c.first.seq, second.seq, c.lo);
  if (!options_.race_findings) return;
  const NamedRange* named = book_.name_at(c.lo);
  const Allocation* alloc = book_.allocation_at(c.lo);
  const uint64_t base = named ? named->base : alloc ? alloc->base : 0;
  const uint64_t buffer_id = named ? (1ull << 62) | named->name : alloc ? (2ull << 62) | alloc->ordinal : 0;

  const PatternKey pattern{pack_op(c.first, c.first_role) | (uint64_t(possible) << 32), pack_names(c.first),
                           pack_op(second, second_role), pack_names(second), buffer_id};
  if (auto it = patterns_.find(pattern); it != patterns_.end()) {
    findings_.repeat(it->second, rank_, c.lo - base, c.hi - c.lo);
    return;
  }

  RaceFacts r;
  r.possible = possible;
  r.first = describe(c.first, c.first_role);
  r.second = describe(second, second_role);
  r.second_on_host = second.stream_slot == kHostSlot;
  if (named) {
    r.buffer.name = text(named->name);
    r.buffer.alloc_bytes = named->bytes;
    r.buffer_key = r.buffer.name;
  } else if (alloc) {
    r.buffer.name = fmt::format("allocation {:#x}", alloc->base);
    r.buffer.alloc_bytes = alloc->bytes;
    r.buffer_key = fmt::format("allocation #{} ({} bytes, {})", alloc->ordinal, alloc->bytes, trace::to_string(alloc->kind));
  } else {
    r.buffer.name = fmt::format("untracked memory at {:#x}", c.lo);
    r.buffer_key = "untracked memory";
  }
  r.buffer.alloc_base = base;
  r.buffer.offset = c.lo - base;
  r.buffer.bytes = c.hi - c.lo;
  r.tier = weaker_tier(c.first.tier, second.tier);
  r.exact = c.first.exact && second.exact;
  r.directed_write = directed_write(c.first, c.first_role) || directed_write(second, second_role);
  r.in_graph = (c.first.flags | second.flags) & kOpInGraph;
  patterns_.emplace(pattern, findings_.add(race_finding(std::move(r))));
}

}  // namespace streamhaz::analysis
