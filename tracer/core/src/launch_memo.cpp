#include "streamhaz/tracer/launch_memo.h"

#include <algorithm>

namespace streamhaz::tracer {
namespace {

// FNV-1a over the key's bytes: launch keys are short, and this runs once per launch.
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  }
};

bool same_ranges(const std::vector<KernelRange>& a, const std::vector<KernelRange>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const KernelRange& x, const KernelRange& y) {
    return x.lo == y.lo && x.hi == y.hi && x.mode == y.mode;
  });
}

}  // namespace

size_t LaunchKeyHash::operator()(const LaunchKey& k) const noexcept {
  Fnv f;
  f.add(&k.context, sizeof k.context);
  f.add(&k.function, sizeof k.function);
  f.add(k.grid, sizeof k.grid);
  f.add(k.block, sizeof k.block);
  f.add(&k.shared_mem, sizeof k.shared_mem);
  f.add(k.params.data(), k.params.size());
  return static_cast<size_t>(f.h);
}

bool LaunchMemo::reuse(const LaunchKey& key, std::vector<KernelRange>& ranges) {
  if (key.params.empty()) return false;
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.agreeing < kConfirmations || varying_.count(key.function)) return false;
  ranges = it->second.ranges;
  ++counts_.reused;
  return true;
}

void LaunchMemo::observe(const LaunchKey& key, const std::vector<KernelRange>& ranges) {
  if (key.params.empty() || ranges.empty()) return;
  std::lock_guard lock(mu_);
  ++counts_.observed;
  if (varying_.count(key.function)) return;
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxKeys || ranges.size() > kMaxRangesPerKey) return;
    entries_.emplace(key, Entry{ranges, 1});
    return;
  }
  if (same_ranges(it->second.ranges, ranges)) {
    ++it->second.agreeing;
    return;
  }
  // Same arguments, other bytes: the kernel reads its addresses from memory.
  varying_.insert(key.function);
  ++counts_.varying_functions;
}

void LaunchMemo::forget(uint64_t context) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [context](const auto& e) { return e.first.context == context; });
}

LaunchMemo::Counts LaunchMemo::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace streamhaz::tracer
