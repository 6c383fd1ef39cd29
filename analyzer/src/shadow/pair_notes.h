// The pairs one access meets, one per earlier operation and role with the bytes they span
// (ShadowMemory's `out` and `ordered`). An access over many cells can meet thousands of earlier
// operations: a bucket's all-reduce after one copy per gradient, each ordered through the wait
// before it. Past a few pairs an index finds a pair's entry, where a scan of all made such an
// access quadratic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/op_stamp.h"

namespace streamhaz::analysis {

// One unordered conflicting pair found by an access: the earlier operation, what it did,
// and the bytes (the span of all pieces where the pair conflicted).
struct Conflict {
  OpStamp first;
  trace::AccessMode first_role;
  uint64_t lo, hi;
};

class PairNotes {
 public:
  // Notes go to `out`, which the caller cleared.
  void start(std::vector<Conflict>* out) {
    out_ = out;
    if (!index_.empty()) index_.clear();
  }
  bool active() const { return out_ != nullptr; }

  // The pair with `prev` in `role` spans [lo, hi) too, or is new (appended, in the order met).
  void note(const OpStamp& prev, trace::AccessMode role, uint64_t lo, uint64_t hi) {
    std::vector<Conflict>& out = *out_;
    if (out.size() <= kScanned) {
      for (Conflict& c : out)
        if (c.first == prev && c.first_role == role) return widen(c, lo, hi);
      out.push_back(Conflict{prev, role, lo, hi});
      if (out.size() > kScanned)
        for (uint32_t i = 0; i < out.size(); ++i) index_.emplace(key_of(out[i].first, out[i].first_role), i);
      return;
    }
    auto [at, fresh] = index_.try_emplace(key_of(prev, role), static_cast<uint32_t>(out.size()));
    if (!fresh) return widen(out[at->second], lo, hi);
    out.push_back(Conflict{prev, role, lo, hi});
  }

 private:
  static constexpr size_t kScanned = 16;
  struct Key {
    uint64_t seq;
    Epoch epoch;  // a graph's operation runs once per launch: one seq, an epoch per run
    trace::AccessMode role;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.seq * 0x9e3779b97f4a7c15ull;
      h ^= (uint64_t(k.epoch.timeline) << 40 ^ uint64_t(k.epoch.clock) << 8 ^ uint64_t(k.role)) + (h >> 29);
      return static_cast<size_t>(h * 0xbf58476d1ce4e5b9ull);
    }
  };
  static Key key_of(const OpStamp& op, trace::AccessMode role) { return Key{op.seq, op.epoch, role}; }
  static void widen(Conflict& c, uint64_t lo, uint64_t hi) {
    c.lo = std::min(c.lo, lo);
    c.hi = std::max(c.hi, hi);
  }

  std::vector<Conflict>* out_ = nullptr;
  std::unordered_map<Key, uint32_t, KeyHash> index_;
};

}  // namespace streamhaz::analysis
