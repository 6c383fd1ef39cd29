#include "engine/collective_matcher.h"

namespace streamhaz::analysis {
namespace {
bool rooted(trace::NcclKind k) {
  using K = trace::NcclKind;
  return k == K::Broadcast || k == K::Scatter || k == K::Reduce || k == K::Gather;
}
}  // namespace

bool CollectiveMatcher::post(const trace::Nccl& n, const VectorClock& start) {
  const CollectiveKey key{n.comm, n.comm_seq};
  auto [it, fresh] = pending_.try_emplace(key, Pending{n.kind, n.count, n.nranks, n.peer, {}, {}});
  Pending& p = it->second;
  if (!fresh && !p.mismatch &&
      (p.kind != n.kind || p.count != n.count || p.nranks != n.nranks || (rooted(n.kind) && p.root != n.peer))) {
    // Ranks disagree on what call k was: no edge is safer than a wrong one.
    p.mismatch = true;
    ++mismatched_;
  }
  p.joined.join(start);
  if (rooted(n.kind) && n.peer >= 0 && n.rank == static_cast<uint32_t>(n.peer)) p.root_start.join(start);
  ++p.posted;
  ++p.waiting;
  if (p.posted > p.nranks && !p.mismatch) {
    p.mismatch = true;
    ++mismatched_;
  }
  return !(p.released || p.posted >= p.nranks);
}

bool CollectiveMatcher::ready(const CollectiveKey& k) const {
  auto it = pending_.find(k);
  return it == pending_.end() || it->second.released || it->second.posted >= it->second.nranks;
}

VectorClock CollectiveMatcher::take(const CollectiveKey& k, uint32_t comm_rank) {
  auto it = pending_.find(k);
  if (it == pending_.end()) return {};
  Pending& p = it->second;
  VectorClock result;
  if (!p.mismatch) {
    using K = trace::NcclKind;
    const bool is_root = p.root >= 0 && comm_rank == static_cast<uint32_t>(p.root);
    switch (p.kind) {
      case K::Broadcast:
      case K::Scatter: result = p.root_start; break;                      // receives from the root
      case K::Reduce:
      case K::Gather: result = is_root ? p.joined : VectorClock{}; break;  // only the root receives
      default: result = p.joined; break;                                   // every rank receives from all
    }
  }
  if (p.waiting) --p.waiting;
  forget_if_done(it);
  return result;
}

void CollectiveMatcher::release_all() {
  for (auto& [key, p] : pending_) {
    if (p.released || p.posted >= p.nranks) continue;
    p.released = true;
    ++partial_;
  }
}

void CollectiveMatcher::forget_if_done(std::map<CollectiveKey, Pending>::iterator it) {
  if (it->second.waiting == 0 && it->second.posted >= it->second.nranks) pending_.erase(it);
}

}  // namespace streamhaz::analysis
