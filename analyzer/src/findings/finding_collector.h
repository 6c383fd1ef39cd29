// Folds race occurrences into findings. A finding's key is built from stable things only
// (operation kinds and names, stream names, NVTX ranges, buffer name, roles), so the same
// race in every step, bucket and rank becomes one finding with a count.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "streamhaz/analysis/finding.h"

namespace streamhaz::analysis {

class FindingCollector {
 public:
  // Adds the first occurrence seen by one rank of a pattern (f.key set); returns the index
  // of the finding it folded into. The operations shown are the lowest rank's.
  size_t add(Finding f);
  // Another occurrence of finding `index`, on `rank`, at [offset, offset + bytes) of its buffer.
  void repeat(size_t index, int rank, uint64_t offset, uint64_t bytes);

  std::vector<Finding>& findings() { return findings_; }
  // Folds another collector's findings in (ranks checked apart): the same result as if its
  // occurrences had been added here.
  void absorb(FindingCollector&& other);
  void absorb(std::vector<Finding> findings);  // another collector's findings, as taken
  // Findings in a stable order: by buffer name, then key.
  std::vector<Finding> take();

 private:
  std::vector<Finding> findings_;
  std::unordered_map<std::string, size_t> by_key_;
};

}  // namespace streamhaz::analysis
