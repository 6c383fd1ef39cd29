// The check pipeline every front end runs (`check`, `report`): the race check, then the
// over-synchronisation pass (its findings, notes, the minimal synchronisation and each race's
// manifestation), then the call stacks of what is reported. Suppressions are the report layer's
// (streamhaz/report/suppressions.h), applied by the front end afterwards.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/sync.h"

namespace streamhaz::analysis {

struct CheckRequest {
  std::vector<std::string> files;     // trace files (expanded)
  AnalysisOptions analysis;
  std::optional<SyncOptions> sync;    // nullopt: no over-synchronisation pass (--no-sync)
};

struct CheckResult {
  AnalysisResult analysis;  // findings of every kind, warnings, sync notes, minimal sync advice
  WhatIf minimal_sync;      // the minimal synchronisation as a what-if (empty without the pass)
  bool sync_ran = false;
};

CheckResult check(const CheckRequest& request);

}  // namespace streamhaz::analysis
