// Suppression files: hand-written rules that silence known findings (docs/check.md).
//
//   # the reduction stream is known to race with the bucket copy; fixed in #123
//   race op:*ncclAllReduce* buffer:ipg_buffer* streams:compute stream,reduction stream
//
// A line is an optional finding kind (race, oversync or *) followed by key:value fields; a
// value runs to the next " key:" and may contain spaces. A finding is suppressed when every
// field of some rule matches it. Patterns are globs with * and ? (\ escapes).
#pragma once

#include <istream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/report/report_input.h"

namespace streamhaz::report {

// A malformed rule: names the file and line so the user can fix it (check exits 2).
class SuppressionError : public std::runtime_error {
 public:
  SuppressionError(const std::string& file, int line, const std::string& what);
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string file_;
  int line_;
};

struct SuppressionRule {
  RuleOrigin origin;
  std::optional<analysis::FindingKind> kind;  // none: any kind
  std::vector<std::string> ops;               // 0-2 patterns, each must match a different op
  std::optional<std::string> buffer;
  std::vector<std::string> streams;           // 1-2 patterns: one op's stream each, either order
  std::optional<std::string> nvtx;            // either op's NVTX range path
  std::optional<std::string> key;             // Finding::key
};

// Parses rules from `in`; `file` is used in error messages. Throws SuppressionError.
std::vector<SuppressionRule> parse_suppressions(std::istream& in, const std::string& file);
// Reads a suppression file. Throws SuppressionError (also when it cannot be opened).
std::vector<SuppressionRule> load_suppressions(const std::string& path);

bool rule_matches(const SuppressionRule& rule, const analysis::Finding& finding);

// Moves every finding some rule matches from `input.analysis.findings` to `input.suppressed`.
void apply_suppressions(const std::vector<SuppressionRule>& rules, ReportInput& input);

}  // namespace streamhaz::report
