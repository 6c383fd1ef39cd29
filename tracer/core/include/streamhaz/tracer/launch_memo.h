// The exact tier's launch memo: a launch identical to earlier ones (same function, grid, block,
// dynamic shared memory and argument bytes) touches the same bytes, unless the kernel computes
// its addresses from data in memory. The memo lets such a launch run uninstrumented and reuse
// the footprint its twins reported, which is what keeps the exact tier affordable on a training
// loop that launches the same kernels with the same tensors every step.
//
// A key is reused only after kConfirmations instrumented launches reported the same ranges; one
// disagreement marks the whole function as data-dependent, and its launches are instrumented
// from then on. Launches whose argument bytes the tracer could not read are never memoised, nor
// is an empty footprint (a launch that failed reads back an empty table too).
// What stays unsound (documented in docs/footprints.md): a data-dependent kernel whose first
// launches happened to agree.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer {

struct LaunchKey {
  uint64_t context = 0;  // a runtime CUkernel handle is the same in every context
  uint64_t function = 0;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_mem = 0;
  std::string params;  // argument bytes; empty: unknown, never memoised
  bool operator==(const LaunchKey&) const = default;
};

struct LaunchKeyHash {
  size_t operator()(const LaunchKey& k) const noexcept;
};

class LaunchMemo {
 public:
  static constexpr unsigned kConfirmations = 2;
  static constexpr size_t kMaxKeys = size_t{1} << 16;       // beyond: new keys are always instrumented
  static constexpr size_t kMaxRangesPerKey = size_t{1} << 12;  // a larger footprint is not kept

  struct Counts {
    uint64_t reused = 0;            // launches given a memoised footprint
    uint64_t observed = 0;          // instrumented launches reported to the memo
    uint64_t varying_functions = 0; // functions found data-dependent
  };

  // True, with the footprint in `ranges`, where `key` may skip instrumentation.
  bool reuse(const LaunchKey& key, std::vector<KernelRange>& ranges);
  // An instrumented launch of `key` touched `ranges`.
  void observe(const LaunchKey& key, const std::vector<KernelRange>& ranges);
  // A module of `context` is unloaded (its function handles may come back for other code) or
  // the context is destroyed: its keys are forgotten.
  void forget(uint64_t context);
  Counts counts() const;

 private:
  struct Entry {
    std::vector<KernelRange> ranges;
    unsigned agreeing = 0;  // instrumented launches that reported `ranges`
  };
  mutable std::mutex mu_;
  std::unordered_map<LaunchKey, Entry, LaunchKeyHash> entries_;
  std::unordered_set<uint64_t> varying_;  // functions whose identical launches disagreed
  Counts counts_;
};

}  // namespace streamhaz::tracer
