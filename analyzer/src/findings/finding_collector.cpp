#include "findings/finding_collector.h"

#include <algorithm>

namespace streamhaz::analysis {

size_t FindingCollector::add(Finding f) {
  auto it = by_key_.find(f.key);
  if (it == by_key_.end()) {
    const int rank = f.first.rank;
    f.occurrences = 1;
    f.ranks = {rank};
    by_key_.emplace(f.key, findings_.size());
    findings_.push_back(std::move(f));
    return findings_.size() - 1;
  }
  Finding& kept = findings_[it->second];
  if (f.first.rank < kept.first.rank) {
    // Show the lowest rank's first occurrence, whatever order the ranks were analysed in.
    f.occurrences = kept.occurrences;
    f.ranks = std::move(kept.ranks);
    const uint64_t lo = kept.buffer.offset, hi = kept.buffer.offset + kept.buffer.bytes;
    kept = std::move(f);
    repeat(it->second, kept.first.rank, lo, hi - lo);
  } else {
    repeat(it->second, f.first.rank, f.buffer.offset, f.buffer.bytes);
  }
  return it->second;
}

void FindingCollector::repeat(size_t index, int rank, uint64_t offset, uint64_t bytes) {
  Finding& f = findings_[index];
  ++f.occurrences;
  if (std::find(f.ranks.begin(), f.ranks.end(), rank) == f.ranks.end()) {
    f.ranks.push_back(rank);
    std::sort(f.ranks.begin(), f.ranks.end());
  }
  // The buffer range grows to cover every occurrence (buckets at different offsets).
  const uint64_t lo = std::min(f.buffer.offset, offset);
  const uint64_t hi = std::max(f.buffer.offset + f.buffer.bytes, offset + bytes);
  f.buffer.offset = lo;
  f.buffer.bytes = hi - lo;
}

void FindingCollector::absorb(FindingCollector&& other) {
  absorb(std::move(other.findings_));
  other.findings_.clear();
  other.by_key_.clear();
}

void FindingCollector::absorb(std::vector<Finding> findings) {
  for (Finding& f : findings) {
    auto it = by_key_.find(f.key);
    if (it == by_key_.end()) {
      by_key_.emplace(f.key, findings_.size());
      findings_.push_back(std::move(f));
      continue;
    }
    Finding& kept = findings_[it->second];
    const uint64_t lo = std::min(kept.buffer.offset, f.buffer.offset);
    const uint64_t hi = std::max(kept.buffer.offset + kept.buffer.bytes, f.buffer.offset + f.buffer.bytes);
    const uint64_t occurrences = kept.occurrences + f.occurrences;
    std::vector<int> ranks = kept.ranks;
    ranks.insert(ranks.end(), f.ranks.begin(), f.ranks.end());
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (f.first.rank < kept.first.rank) kept = std::move(f);  // show the lowest rank's occurrence
    kept.occurrences = occurrences;
    kept.ranks = std::move(ranks);
    kept.buffer.offset = lo;
    kept.buffer.bytes = hi - lo;
  }
}

std::vector<Finding> FindingCollector::take() {
  std::vector<Finding> out = std::move(findings_);
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.buffer.name != b.buffer.name) return a.buffer.name < b.buffer.name;
    return a.key < b.key;
  });
  findings_.clear();
  by_key_.clear();
  return out;
}

}  // namespace streamhaz::analysis
