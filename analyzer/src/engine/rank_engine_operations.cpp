// RankEngine, operations: kernels (checked once their footprint has arrived), copies, memsets
// and host functions, each an operation on its stream.
#include "engine/rank_engine.h"

#include <algorithm>

namespace streamhaz::analysis {

namespace {
// An operation's byte ranges are exact only if every range is: a finding names one
// operation, not the range of it that conflicted.
bool all_exact(const std::vector<ByteRange>& ranges) {
  return std::all_of(ranges.begin(), ranges.end(), [](const ByteRange& b) { return b.exact; });
}
}  // namespace

void RankEngine::on(const trace::Kernel& r) {
  if (CapturedGraph* g = captured(*current_, r.op.stream)) {
    g->last_kernel_seq = r.op.seq;
    return;
  }
  const uint32_t slot = slot_of(r.op.stream);
  const Epoch e = enqueue(slot);
  ++operations_;
  pending_.active = true;
  pending_.op = stamp(r.op, e, slot, OpKind::Kernel, r.name);
  pending_.slot = slot;
  pending_.ranges.clear();
  pending_.pointers.clear();
  if (summaries_) add_summary_ranges(r);
}

void RankEngine::add_summary_ranges(const trace::Kernel& k) {
  auto [it, fresh] = summary_of_name_.try_emplace(k.name, nullptr);
  if (fresh) it->second = summaries_->find(text(k.name));
  const KernelSummary* summary = it->second;
  if (!summary) return;
  EvaluateStatus status = EvaluateStatus::Ok;
  const std::vector<KernelRange> ranges = evaluate(*summary, k.params, &status);
  if (status != EvaluateStatus::Ok) {
    ++summary_unused_;
    return;
  }
  for (const KernelRange& r : ranges) {
    uint64_t hi;
    if (r.bytes) {
      hi = range_end(r.ptr, *r.bytes);
    } else {  // unknown extent: the rest of the allocation (or the one byte, if untracked)
      const Allocation* a = book_.allocation_at(r.ptr);
      hi = a ? range_end(a->base, a->bytes) : range_end(r.ptr, 1);
    }
    pending_.ranges.push_back({r.ptr, hi, r.mode, false});
  }
  if (!ranges.empty()) pending_.op.tier = trace::FootprintTier::Static;
}

void RankEngine::on(const trace::Access& r) {
  if (pending_.active && pending_.op.seq == r.op_seq && r.tier == trace::FootprintTier::Pointer) {
    pending_.pointers.push_back({r.ptr, r.mode});
    return;
  }
  if (pending_.active && pending_.op.seq == r.op_seq) {
    // Static summaries may fall back to "rest of the allocation", coarse ranges round to 32 KiB:
    // not exact.
    pending_.ranges.push_back({r.ptr, range_end(r.ptr, r.bytes), r.mode, trace::tier_facts(r.tier).exact_ranges});
    pending_.op.tier = pending_.ranges.size() == 1 ? r.tier : weaker_tier(pending_.op.tier, r.tier);
    return;
  }
  if (replaying_) return;
  for (auto& [id, g] : graphs_) {
    if (g.open && g.last_kernel_seq == r.op_seq) {
      g.records.push_back(*current_);
      return;
    }
  }
}

void RankEngine::flush_pending() {
  if (!pending_.active) return;
  pending_.active = false;
  OpStamp op = pending_.op;
  const VectorClock& now = streams_[pending_.slot].clock;
  if (!pending_.ranges.empty()) {
    ++kernels_by_tier_[static_cast<size_t>(op.tier)];
    op.exact = all_exact(pending_.ranges);
    for (const ByteRange& b : pending_.ranges) touch(op, b, now);
    // A pointer argument into bytes no range of a stronger tier covers is still evidence: the
    // kernel may reach memory its summary or instrumentation did not see (a struct member, a
    // TMA copy that Compute Sanitizer does not report).
    // Such a pointer is weak evidence (the stronger footprint saw no access there): possible races only.
    std::erase_if(pending_.pointers, [&](const PointerArg& p) {
      return std::any_of(pending_.ranges.begin(), pending_.ranges.end(),
                         [&p](const ByteRange& b) { return b.lo <= p.addr && p.addr < b.hi; });
    });
    if (!pending_.pointers.empty()) {
      OpStamp weak = op;
      weak.tier = trace::FootprintTier::Pointer;
      weak.exact = false;
      weak.flags |= kOpPointerFallback;
      touch_pointers(weak, pending_.pointers, now);
    }
  } else if (!pending_.pointers.empty()) {
    ++kernels_by_tier_[static_cast<size_t>(trace::FootprintTier::Pointer)];
    op.tier = trace::FootprintTier::Pointer;
    op.exact = false;
    touch_pointers(op, pending_.pointers, now);
  } else {
    ++without_footprint_;  // ordering only
    return;
  }
  report_conflicts(op);
}

RankEngine::HostWait RankEngine::host_wait_for_copy(const trace::Memcpy& m) const {
  using K = trace::MemcpyKind;
  const bool pageable = m.flags & trace::kMemPageableHost;
  switch (m.kind) {
    case K::HostToHost:
    case K::DeviceToHost: return HostWait::After;  // returns once the copy is done
    case K::HostToDevice: return pageable ? HostWait::Before : HostWait::After;
    case K::DeviceToDevice:
    case K::Peer: return HostWait::None;
    case K::Default: {  // direction inferred from the pointers (UVA)
      const auto dst_dev = book_.is_device(m.dst), src_dev = book_.is_device(m.src);
      if (dst_dev == false || (pageable && src_dev == true)) return HostWait::After;
      if (dst_dev == true && (src_dev == false || pageable)) return pageable ? HostWait::Before : HostWait::After;
      return HostWait::None;
    }
  }
  return HostWait::None;
}

void RankEngine::on(const trace::Memcpy& r) {
  if (captured(*current_, r.op.stream)) return;
  const uint32_t slot = slot_of(r.op.stream);
  const bool sync = (r.flags & trace::kMemSync) && !replaying_;
  const HostWait wait = sync ? host_wait_for_copy(r) : HostWait::None;
  if (wait == HostWait::Before) {  // pageable source: the stream is drained before the copy
    enqueue(slot, false);
    host_joins(streams_[slot].clock);
  }
  const Epoch e = enqueue(slot);
  ++operations_;
  OpStamp op = stamp(r.op, e, slot, memcpy_op_kind(r.kind), 0, sync ? uint8_t(kOpSync) : uint8_t(0));
  ranges_.clear();
  memcpy_footprint(r, ranges_);
  op.exact = all_exact(ranges_);
  for (const ByteRange& b : ranges_) touch(op, b, streams_[slot].clock);
  report_conflicts(op);
  if (wait == HostWait::After) host_joins(streams_[slot].clock);
}

void RankEngine::on(const trace::Memset& r) {
  if (captured(*current_, r.op.stream)) return;
  const uint32_t slot = slot_of(r.op.stream);
  const Epoch e = enqueue(slot);  // cudaMemset: a legacy-stream operation, the host does not wait
  ++operations_;
  OpStamp op = stamp(r.op, e, slot, OpKind::MemsetOp, 0, (r.flags & trace::kMemSync) ? uint8_t(kOpSync) : uint8_t(0));
  ranges_.clear();
  memset_footprint(r, ranges_);
  op.exact = all_exact(ranges_);
  for (const ByteRange& b : ranges_) touch(op, b, streams_[slot].clock);
  report_conflicts(op);
}

void RankEngine::on(const trace::HostFunc& r) {
  if (captured(*current_, r.op.stream)) return;
  enqueue(slot_of(r.op.stream));  // an operation on its stream; host memory is out of scope
  ++operations_;
}

}  // namespace streamhaz::analysis
