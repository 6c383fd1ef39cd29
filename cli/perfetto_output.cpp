#include "perfetto_output.h"

#include <fmt/format.h>

#include <optional>

#include "commands.h"
#include "messages.h"
#include "output_file.h"
#include "streamhaz/analysis/analyze.h"
#include "streamhaz/report/perfetto_export.h"
#include "streamhaz/report/timeline.h"

namespace streamhaz::cli {

int export_perfetto(const std::vector<std::string>& paths, const std::string& file, bool force) {
  std::optional<OutputFile> out;  // refused before the analysis, not after it
  try {
    out.emplace(file, force, paths);
  } catch (const std::runtime_error& e) {
    return usage_error("export", e.what());
  }
  // The findings become markers; the analysis also numbers the ranks the way check does.
  const analysis::AnalysisResult result = analysis::analyze(paths);
  const report::Timeline timeline = report::load_timeline(result.traces);
  report::PerfettoStats stats;
  try {
    stats = report::write_perfetto_trace(out->stream(), timeline, result.findings);
    out->commit();
  } catch (const std::runtime_error& e) {
    return usage_error("export", e.what());
  }
  warnings("export", result.warnings);
  say("export", fmt::format("wrote {} ({} slices, {} flows, {} finding markers)", file, stats.slices, stats.flows,
                            stats.instants));
  return kExitClean;
}

}  // namespace streamhaz::cli
