#pragma once
// A synchronisation instance's site, and the group of sites removed together it belongs to (the
// minimal synchronisation's: every synchronisation it may replace), numbered from 1; 0: none.
// Apart from analyze.h so that the rank engine can name it without the analysis options.
#include <cstdint>

namespace streamhaz::analysis {

struct SyncSiteIds {
  uint32_t site = 0;
  uint32_t group = 0;
};

}  // namespace streamhaz::analysis
