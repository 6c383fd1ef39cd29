// What every report writer (text, JSON, SARIF) is given: the analysis result with the
// suppressed findings already taken out, and those suppressed findings with the rule that
// matched them (SARIF keeps them as suppressed results; text and JSON count them).
#pragma once

#include <string>
#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/version.h"

namespace streamhaz::report {

// Where a suppression rule was written, for messages and for SARIF's justification.
struct RuleOrigin {
  std::string file;
  int line = 0;
  std::string text;  // the rule as written, without comment
};

struct SuppressedFinding {
  analysis::Finding finding;
  RuleOrigin rule;
};

struct ReportInput {
  analysis::AnalysisResult analysis;  // findings: only those that are reported
  std::vector<SuppressedFinding> suppressed;
  std::string tool_version = kVersion;
  // Text report: show every stack frame (torch internals, the Python standard library, CUDA
  // and system libraries) instead of folding them (check --full-stacks).
  bool full_stacks = false;
  // Text report: one line per synchronisation site judged (the over-synchronisation notes) and
  // the minimal synchronisation even without an over-synchronisation finding (check
  // --sync-notes); by default a clean run's report says how many sites were judged in one line.
  bool sync_notes = false;
  // SARIF: source files under this folder are given relative to it, so that code scanning
  // links them to the repository (check --source-root); "" leaves paths as traced.
  std::string source_root;
};

// "race" / "oversync": the names used on the command line, in suppression files, as the
// JSON "kind" and as SARIF rule ids.
const char* kind_id(analysis::FindingKind kind);

}  // namespace streamhaz::report
