// RankEngine, memory: allocations and frees, and every access checked against shadow memory
// (conflicts gathered per operation, then reported).
#include "engine/rank_engine.h"

#include <algorithm>

#include "engine/pointer_evidence.h"

namespace streamhaz::analysis {

using trace::AccessMode;

namespace {
// One pair of the same two operations: roles combined, bytes spanned.
template <class OpConflictT>
void merge_into(OpConflictT& oc, const Conflict& c, AccessMode second_role) {
  oc.c.first_role = static_cast<AccessMode>(uint8_t(oc.c.first_role) | uint8_t(c.first_role));
  oc.second_role = static_cast<AccessMode>(uint8_t(oc.second_role) | uint8_t(second_role));
  oc.c.lo = std::min(oc.c.lo, c.lo);
  oc.c.hi = std::max(oc.c.hi, c.hi);
}

// The same earlier operation on overlapping or adjacent bytes: one pair, roles combined.
template <class OpConflictT>
void gather(std::vector<OpConflictT>& into, const Conflict& c, AccessMode second_role) {
  for (OpConflictT& oc : into) {
    if (oc.c.first == c.first && c.lo <= oc.c.hi && oc.c.lo <= c.hi) return merge_into(oc, c, second_role);
  }
  into.push_back({c, second_role});
}
bool writes(AccessMode m) { return uint8_t(m) & uint8_t(AccessMode::Write); }

// Which earlier operations gather_latest keeps one pair per timeline of: every one (the later
// operation is a phantom, which meets everything kept since the last write), or the phantoms
// alone (a real access keeps every pair with real operations, the pairs of the run as traced).
enum class Latest : uint8_t { OfAll, OfPhantoms };

// Ordered pairs, one per timeline: of two earlier operations on one timeline, the later needs
// every site the earlier one needs (VectorClock::sites_needed_for: a site is needed for an epoch
// when the clock without it is below the epoch's value), so the latest one alone decides which
// sites the order rests on, and waits that order it order the rest by timeline order. A phantom
// meets every access kept since the last write, over all memory, and every access meets every
// phantom since the last write: this keeps the pass's pairs per operation to its timelines.
// Operations of graphs stay apart: a graph launched twice checks one pair twice, and a pair
// another launch leaves unordered is no site's. Earlier phantoms left out go to `passed_over`:
// the verdict counts the kernels without footprint a site orders (RankEngine::report_ordered).
template <typename OpConflictT>
void gather_latest(std::vector<OpConflictT>& into, const Conflict& c, AccessMode second_role, Latest of,
                   std::vector<OpStamp>& passed_over) {
  auto one_per_timeline = [of](const OpStamp& first) {
    return !(first.flags & kOpInGraph) && (of == Latest::OfAll || (first.flags & kOpPhantom));
  };
  if (!one_per_timeline(c.first)) return gather(into, c, second_role);
  for (OpConflictT& oc : into) {
    if (oc.c.first.epoch.timeline != c.first.epoch.timeline || !one_per_timeline(oc.c.first)) continue;
    if (oc.c.first == c.first) {  // the same operation elsewhere in memory: one pair, its lowest byte
      merge_into(oc, c, second_role);
    } else if (oc.c.first.epoch.clock < c.first.epoch.clock) {
      if (oc.c.first.flags & kOpPhantom) passed_over.push_back(oc.c.first);
      oc = {c, second_role};
    } else if (c.first.flags & kOpPhantom) {
      passed_over.push_back(c.first);
    }
    return;
  }
  into.push_back({c, second_role});
}
}  // namespace

void RankEngine::on(const trace::Alloc& r) {
  // Fresh memory has no history: cudaFree/cudaFreeAsync ordered the previous owner's work
  // before it (checked when the free was applied).
  book_.allocate(r);
  shadow_.forget(r.ptr, range_end(r.ptr, r.bytes));
  pointer_shadow_.forget(r.ptr, range_end(r.ptr, r.bytes));
}

void RankEngine::on(const trace::Free& r) {
  const Allocation* known = book_.allocation_at(r.ptr);
  if (!known || known->base != r.ptr) return;
  const Allocation a = *known;  // findings name the bytes: forget the allocation last
  if (r.kind == trace::AllocKind::Async) {
    // cudaFreeAsync: a stream-ordered write-like release; the pool orders the reuse.
    const uint32_t slot = slot_of(r.stream);
    const Epoch e = enqueue(slot);
    const OpStamp op = stamp(trace::OpCommon{r.seq, r.stream, 0}, e, slot, OpKind::FreeAsync);
    touch(op, ByteRange{a.base, range_end(a.base, a.bytes), AccessMode::Write, true}, streams_[slot].clock);
    report_conflicts(op);
    book_.release(r.ptr);
    return;
  }
  // cudaFree waits for the whole device first; host and VMM frees promise no such wait.
  if (r.kind == trace::AllocKind::Device || r.kind == trace::AllocKind::Managed)
    for (const StreamState& s : streams_)
      if (s.device == a.device) host_joins(s.clock);
  const Epoch e = host_->clock.tick(host_->timeline);
  ++host_->version;
  OpStamp op;
  op.seq = r.seq;
  op.epoch = e;
  op.stream_slot = kHostSlot;
  op.kind = OpKind::Free;
  op.flags = kOpHostSide;
  if (checking_order()) {
    note_order(r.seq, e, host_->clock);
    book_.release(r.ptr);
    return;
  }
  std::vector<Conflict>* ordered = tracing_sites() ? &ordered_scratch_ : nullptr;
  shadow_.release(a.base, range_end(a.base, a.bytes), op, host_->clock, conflicts_, ordered);
  for (const Conflict& c : conflicts_) report(c, op, AccessMode::Write);
  if (ordered)
    for (const Conflict& c : *ordered) gather(op_ordered_, c, AccessMode::Write);
  conflicts_.clear();
  pointer_shadow_.touched(a.base, range_end(a.base, a.bytes), AccessMode::Write, op, host_->clock, conflicts_, ordered);
  for (const Conflict& c : conflicts_) {
    const Evidence e = judge(Side{c.first, c.first_role}, Side{op, AccessMode::Write});
    if (e != Evidence::None) report(c, op, AccessMode::Write, e == Evidence::Possible);
  }
  if (ordered)
    for (const Conflict& c : *ordered)
      if (judge(Side{c.first, c.first_role}, Side{op, AccessMode::Write}) != Evidence::None)
        gather(op_ordered_, c, AccessMode::Write);
  report_ordered(op);
  pointer_shadow_.forget(a.base, range_end(a.base, a.bytes));
  book_.release(r.ptr);
}

void RankEngine::on(const trace::BufferName& r) { book_.name(r); }

void RankEngine::touch(const OpStamp& op, const ByteRange& b, const VectorClock& now) {
  if (pass_checks_) return touch_for_pass(op, b, now);
  shadow_.access(b.lo, b.hi, b.mode, op, now, conflicts_);
  for (const Conflict& c : conflicts_) gather(op_conflicts_, c, b.mode);
  if (!pointer_shadow_.empty()) {
    pointer_conflicts_.clear();
    pointer_shadow_.touched(b.lo, b.hi, b.mode, op, now, pointer_conflicts_);
    for (const Conflict& c : pointer_conflicts_) gather_pointer_conflict(c, op, b.mode);
  }
}

void RankEngine::touch_for_pass(const OpStamp& op, const ByteRange& b, const VectorClock& now) {
  if (checking_order()) return;
  std::vector<Conflict>* ordered = tracing_sites() ? &ordered_scratch_ : nullptr;
  using Phantom = ShadowMemory::Phantom;
  const Phantom phantom = !phantom_ops_.contains(op.seq)         ? Phantom::No
                          : lasting_phantom_ops_.contains(op.seq) ? Phantom::Lasting
                                                                  : Phantom::Yes;
  // In the run with phantoms (gather_latest): a phantom keeps one pair per timeline, a real access
  // one per timeline of the phantoms it meets, an operation of a graph every pair. The run as
  // traced keeps every pair: they are the pairs a site is said to protect (SyncVerdict::pairs).
  const bool one_per_timeline = options_.phantom_run && !(op.flags & kOpInGraph);
  const bool latest_only = phantom != Phantom::No && one_per_timeline;
  shadow_.access(b.lo, b.hi, b.mode, op, now, conflicts_, ordered, phantom,
                 latest_only ? ShadowMemory::Ordered::LatestPerTimeline : ShadowMemory::Ordered::All);
  for (const Conflict& c : conflicts_) gather(op_conflicts_, c, b.mode);
  if (ordered) {
    const Latest of = latest_only ? Latest::OfAll : Latest::OfPhantoms;
    for (const Conflict& c : *ordered)
      one_per_timeline ? gather_latest(op_ordered_, c, b.mode, of, op_passed_over_) : gather(op_ordered_, c, b.mode);
  }
  if (!pointer_shadow_.empty()) {
    pointer_conflicts_.clear();
    if (ordered) ordered->clear();
    pointer_shadow_.touched(b.lo, b.hi, b.mode, op, now, pointer_conflicts_, ordered);
    for (const Conflict& c : pointer_conflicts_) gather_pointer_conflict(c, op, b.mode);
    if (ordered)
      for (const Conflict& c : *ordered) gather_pointer_conflict(c, op, b.mode, true);
  }
}

void RankEngine::gather_pointer_conflict(const Conflict& c, const OpStamp& second, AccessMode second_role,
                                         bool ordered) {
  const Evidence e = judge(Side{c.first, c.first_role}, Side{second, second_role});
  if (e == Evidence::None) return;
  // The over-synchronisation pass counts a possible pair as one to keep ordered.
  if (ordered) return gather(op_ordered_, c, second_role);
  gather(e == Evidence::Race ? op_conflicts_ : op_possible_, c, second_role);
}

// A pointer-tier kernel meets the accesses of other tiers that cover the byte its argument
// points at (the last writer; the readers since, when it writes), and earlier pointer-tier
// accesses with the same pointer value; pointer_evidence.h says which pairs are races.
void RankEngine::touch_pointers(const OpStamp& op, const std::vector<PointerArg>& pointers, const VectorClock& now) {
  if (checking_order()) return;
  std::vector<Conflict>* ordered = tracing_sites() ? &ordered_scratch_ : nullptr;
  for (const PointerArg& p : pointers) {
    pointer_conflicts_.clear();
    if (ordered) ordered->clear();
    const uint64_t next = range_end(p.addr, 1);
    const bool may_write = writes(p.role);
    auto meet = [&](const OpStamp& prev, AccessMode role) {
      if (!prev.valid() || prev == op) return;
      if (!now.covers(prev.epoch)) pointer_conflicts_.push_back(Conflict{prev, role, p.addr, next});
      else if (ordered && now.rests_on_sites(prev.epoch)) ordered->push_back(Conflict{prev, role, p.addr, next});
    };
    shadow_.cells().visit(p.addr, next, [&](uint64_t, uint64_t, const ShadowCell& cell) {
      meet(cell.writer, AccessMode::Write);
      if (may_write)
        for (const OpStamp& reader : cell.readers) meet(reader, AccessMode::Read);
    });
    pointer_shadow_.access(p.addr, PointerUse{op, p.role}, now, pointer_conflicts_, ordered);
    for (const Conflict& c : pointer_conflicts_) gather_pointer_conflict(c, op, p.role);
    if (ordered)
      for (const Conflict& c : *ordered) gather_pointer_conflict(c, op, p.role, true);
  }
}

void RankEngine::report_conflicts(const OpStamp& op) {
  for (const OpConflict& oc : op_conflicts_) report(oc.c, op, oc.second_role);
  op_conflicts_.clear();
  for (const OpConflict& oc : op_possible_) report(oc.c, op, oc.second_role, true);
  op_possible_.clear();
  if (!op_ordered_.empty()) report_ordered(op);
}

void RankEngine::report_ordered(const OpStamp& op) {
  if (op_ordered_.empty()) return;
  // The clock the accesses were checked with: the operation's stream's (or the host's), which
  // nothing changes between the check and this report.
  const VectorClock& now = op.stream_slot == kHostSlot ? host_->clock : streams_[op.stream_slot].clock;
  for (const OpConflict& oc : op_ordered_) {
    sites_scratch_.clear();
    now.sites_needed_for(oc.c.first.epoch, sites_scratch_);
    if (!sites_scratch_.empty()) options_.on_ordered_by_sites(rank_, oc.c.first.seq, op.seq, oc.c.lo, sites_scratch_);
  }
  op_ordered_.clear();
  if (op_passed_over_.empty()) return;
  // The phantoms a later one of their timeline stands for in the pairs: each once, with its sites.
  std::sort(op_passed_over_.begin(), op_passed_over_.end(),
            [](const OpStamp& a, const OpStamp& b) { return a.seq < b.seq; });
  for (size_t i = 0; i < op_passed_over_.size(); ++i) {
    const OpStamp& p = op_passed_over_[i];
    if (i > 0 && op_passed_over_[i - 1].seq == p.seq) continue;
    sites_scratch_.clear();
    now.sites_needed_for(p.epoch, sites_scratch_);
    if (!sites_scratch_.empty() && options_.on_phantom_ordered_by_sites)
      options_.on_phantom_ordered_by_sites(rank_, p.seq, sites_scratch_);
  }
  op_passed_over_.clear();
}

}  // namespace streamhaz::analysis
