// Attribution: where in the program the operations of a finding come from. Traces of format
// version 3 may hold call stacks (Python and native frames) for API calls; this pass gives
// each finding the stacks of its operations, the allocation site of its buffer, the origin of
// its streams, and an over-synchronisation's own call site.
#pragma once

#include "streamhaz/analysis/finding.h"

namespace streamhaz::analysis {

struct AttributionOptions {
  // Look native frames up in their modules' files (function, file, line); off: module+offset only.
  bool symbolize = true;
};

// Rereads each trace of `result.traces` that findings name, up to the last operation they name
// (traces without stack records are skipped at once). Throws trace::TraceError for a file that
// no longer reads. Finding keys are left as they are: stacks never change a finding's identity.
void attach_stacks(AnalysisResult& result, const AttributionOptions& options = {});

// Whether this build turns native frames into function, file and line (built with libdw).
bool native_symbols_available();

}  // namespace streamhaz::analysis
