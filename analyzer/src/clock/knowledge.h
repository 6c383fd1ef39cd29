// What a clock knows of other ranks, one entry at a time: a frontier, or the promise of one.
// A rank that runs ahead of a collective (it takes the call before every rank has reached it,
// rank_engine_nccl.cpp) notes a receipt whose frontier is not built yet; the matcher keeps the
// promise when the collective resolves. Until then the promise travels like a frontier: into
// the rank's events, other streams and later posts, and a later collective that names an
// unkept promise resolves only after it (collective_matcher.cpp).
#pragma once

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "clock/frontier.h"

namespace streamhaz::analysis {

class FrontierPromise {
 public:
  // Read by rank engines on any thread; kept once, under the matcher's lock.
  bool kept() const { return kept_.load(std::memory_order_acquire); }
  const FrontierRef& value() const { return value_; }  // only once kept (null: nothing received)
  void keep(FrontierRef f) {
    value_ = std::move(f);
    kept_.store(true, std::memory_order_release);
  }

 private:
  FrontierRef value_;
  std::atomic<bool> kept_{false};
};
using PromiseRef = std::shared_ptr<FrontierPromise>;

struct Known {
  FrontierRef frontier;  // set, or
  PromiseRef promise;    // a promise (kept or not)

  Known() = default;
  Known(FrontierRef f) : frontier(std::move(f)) {}  // NOLINT: a frontier is known as itself
  explicit Known(PromiseRef p) : promise(std::move(p)) {}

  // The frontier, once there is one: null for an unkept promise or a kept one of nothing.
  const FrontierRef* get() const {
    if (!promise) return frontier ? &frontier : nullptr;
    if (!promise->kept() || !promise->value()) return nullptr;
    return &promise->value();
  }
  bool pending() const { return promise && !promise->kept(); }
};

// Kept promises become their frontiers (dropped when they gave nothing), then frontiers that
// another one of the set covers are dropped (drop_covered); unkept promises stay as they are.
void settle_known(std::vector<Known>& set);

}  // namespace streamhaz::analysis
