#include "streamhaz/analysis/check.h"

#include "streamhaz/analysis/attribution.h"

namespace streamhaz::analysis {

CheckResult check(const CheckRequest& request) {
  CheckResult out;
  out.analysis = analyze(request.files, request.analysis);
  if (request.sync) {
    SyncReport rep = analyze_sync(request.files, request.analysis, *request.sync, &out.analysis.findings);
    for (Finding& f : rep.findings) out.analysis.findings.push_back(std::move(f));
    for (std::string& w : rep.warnings) out.analysis.warnings.push_back(std::move(w));
    out.analysis.sync_notes = std::move(rep.notes);
    out.analysis.sync_sites = std::move(rep.verdicts);
    out.analysis.minimal_sync = std::move(rep.advice);
    out.analysis.sync_scope = std::move(rep.scope);
    out.minimal_sync = std::move(rep.minimal);
    out.sync_ran = rep.ran;
  }
  // Stacks, allocation sites and stream origins of what is reported (traces with stacks).
  attach_stacks(out.analysis);
  return out;
}

}  // namespace streamhaz::analysis
