// RankEngine::prefetch: the lines a rank's next turn reads first, requested ahead of it.
#include <algorithm>

#include "engine/rank_engine.h"

namespace streamhaz::analysis {

void RankEngine::prefetch_bytes(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(c + at, 0, 2);  // toward L2, not L1
}

void RankEngine::prefetch() const {
  prefetch_bytes(this, sizeof *this);
  prefetch_bytes(streams_.data(), streams_.size() * sizeof(StreamState));
  prefetch_bytes(slot_by_id_.data(), std::min<size_t>(slot_by_id_.size(), 64) * sizeof(uint32_t));
  prefetch_bytes(events_by_id_.data(), std::min<size_t>(events_by_id_.size(), 64) * sizeof(EventState));
  if (host_) prefetch_bytes(host_, sizeof *host_);
  shadow_.prefetch();
}

}  // namespace streamhaz::analysis
