#include "engine/collective_matcher.h"

namespace streamhaz::analysis {

bool CollectiveMatcher::post(const trace::Nccl& n, const VectorClock& start) {
  const CollectiveKey key{n.comm, n.comm_seq};
  auto [it, fresh] = pending_.try_emplace(key, Pending{n.kind, n.count, n.nranks, {}});
  Pending& p = it->second;
  if (!fresh && !p.mismatch && (p.kind != n.kind || p.count != n.count || p.nranks != n.nranks)) {
    // Ranks disagree on what call k was: no edge is safer than a wrong one.
    p.mismatch = true;
    ++mismatched_;
  }
  p.joined.join(start);
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

VectorClock CollectiveMatcher::take(const CollectiveKey& k) {
  auto it = pending_.find(k);
  if (it == pending_.end()) return {};
  Pending& p = it->second;
  VectorClock result = p.mismatch ? VectorClock{} : p.joined;
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
