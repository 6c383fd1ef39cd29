// analyze_sync (streamhaz/analysis/sync.h) given what a read already made learned of each trace:
// check() hands the pass the shapes its race check's read found (sync/shape_reader.h).
#pragma once

#include <string>
#include <vector>

#include "streamhaz/analysis/sync.h"
#include "sync/trace_shape.h"

namespace streamhaz::analysis {

// `shapes`: one per file, or null to read each trace for its shape.
SyncReport analyze_sync(const std::vector<std::string>& trace_files, const AnalysisOptions& options,
                        const SyncOptions& sync_options, std::vector<Finding>* races,
                        const std::vector<TraceShape>* shapes);

}  // namespace streamhaz::analysis
