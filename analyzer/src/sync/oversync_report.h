// How a judged synchronisation site reads in a report: a finding (it costs enough and the check
// accepts the change it proposes) or a note (docs/sync-and-replay.md, "Verdicts and findings").
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/analysis/replay.h"
#include "streamhaz/analysis/sync.h"
#include "sync/site_group.h"

namespace streamhaz::analysis {

struct OversyncReportContext {
  const std::vector<RankRecords>& run;
  const Schedule* measured;  // null: no GPU times
  trace::FootprintTier tier;  // the weakest tier the verdicts rest on
  size_t unfootprinted_kernels;  // in the whole judged run
  const std::map<std::tuple<int, uint64_t, uint64_t>, uint64_t>& first_byte;  // of protected pairs
  const RecordPlaces* places = nullptr;  // run's, where kept
};

Finding oversync_finding(const SiteGroup& g, const SyncVerdict& v, const OversyncReportContext& c);
std::string oversync_note(const SiteGroup& g, const SyncVerdict& v, bool costed);
const char* verdict_text(SyncJudgement v);

}  // namespace streamhaz::analysis
