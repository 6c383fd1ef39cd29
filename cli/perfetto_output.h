// `streamhaz export --perfetto FILE`: the traces' timeline as Chrome trace-event JSON for
// ui.perfetto.dev and chrome://tracing, with the findings of a check as markers.
#pragma once

#include <string>
#include <vector>

namespace streamhaz::cli {

// Analyses `paths`, then writes FILE (never over an existing one without `force`).
// Returns the exit status; bad input throws trace::TraceError like the other verbs.
int export_perfetto(const std::vector<std::string>& paths, const std::string& file, bool force);

}  // namespace streamhaz::cli
