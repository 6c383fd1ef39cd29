// Pieces analyze() and analyze_shard() share, so that both build the same result.
#pragma once

#include <string>
#include <vector>

#include "engine/collective_matcher.h"
#include "engine/rank_engine.h"
#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/finding.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

// What the rank engines read of the options, built once per check.
EngineOptions engine_options(const AnalysisOptions& options);
// Rank numbers of the files: a trace without a rank, or repeating one, gets the lowest number
// no trace declares and none has taken (with a warning for a repeat).
std::vector<int> number_ranks(const std::vector<std::string>& files, const std::vector<int>& declared_ranks,
                              std::vector<std::string>& warnings);
// One trace's summary after its rank ran.
TraceSummary summarise(const trace::TraceReader& reader, const RankEngine& engine);
// The warnings a summary calls for (truncated, records the tracer dropped).
void trace_warnings(const TraceSummary& s, std::vector<std::string>& warnings);
void collective_warnings(const CollectiveMatcher& c, std::vector<std::string>& warnings);
void summary_warnings(const AnalysisResult& r, const AnalysisOptions& options, std::vector<std::string>& warnings);
// Operation and kernel counts of one rank added to the result.
void count(const RankEngine& engine, AnalysisResult& result);

}  // namespace streamhaz::analysis
