#include "streamhaz/report/suppressions.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "streamhaz/report/glob.h"
#include "streamhaz/report/stack_text.h"
#include "streamhaz/trace/input_file.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::report {
namespace {

using analysis::Finding;
using analysis::OpRef;

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// A '#' at the start or after whitespace begins a comment; inside a name it is literal.
std::string strip_comment(const std::string& line) {
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1]))))
      return line.substr(0, i);
  return line;
}

// Length of "key:" starting at `i` when a field starts there, else 0. "::" (C++ scopes in
// kernel names such as "void at::native::f") is not a field separator.
size_t field_start_length(const std::string& line, size_t i) {
  if (i > 0 && !std::isspace(static_cast<unsigned char>(line[i - 1]))) return 0;
  size_t j = i;
  while (j < line.size() && (std::islower(static_cast<unsigned char>(line[j])) || line[j] == '_')) ++j;
  if (j == i || j >= line.size() || line[j] != ':') return 0;
  if (j + 1 < line.size() && line[j + 1] == ':') return 0;
  return j + 1 - i;
}

struct Field {
  std::string key;
  std::string value;
};

// Splits "1 or 2 comma-separated patterns" (streams:a,b and the like).
std::vector<std::string> split_pair(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    out.push_back(trim(std::string_view(value).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

SuppressionRule parse_rule(const std::string& text, const std::string& file, int line_no) {
  auto fail = [&](const std::string& what) -> SuppressionError { return SuppressionError(file, line_no, what); };
  SuppressionRule rule;
  rule.origin = {file, line_no, text};

  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i)
    if (field_start_length(text, i)) starts.push_back(i);

  std::string kind = trim(std::string_view(text).substr(0, starts.empty() ? text.size() : starts.front()));
  if (kind == "race") rule.kind = analysis::FindingKind::Race;
  else if (kind == "oversync") rule.kind = analysis::FindingKind::OverSync;
  else if (kind == "possible-race") rule.kind = analysis::FindingKind::PossibleRace;
  else if (!kind.empty() && kind != "*")
    throw fail("expected a finding kind (race, possible-race, oversync or *) or key:value fields, found '" + kind + "'");

  for (size_t n = 0; n < starts.size(); ++n) {
    size_t key_len = field_start_length(text, starts[n]);
    size_t end = n + 1 < starts.size() ? starts[n + 1] : text.size();
    Field f{text.substr(starts[n], key_len - 1), trim(std::string_view(text).substr(starts[n] + key_len, end - starts[n] - key_len))};
    if (f.value.empty()) throw fail("field '" + f.key + ":' has no value");
    auto set_once = [&](std::optional<std::string>& slot) {
      if (slot) throw fail("field '" + f.key + ":' given twice");
      slot = f.value;
    };
    if (f.key == "op") {
      if (rule.ops.size() == 2) throw fail("at most two 'op:' fields (one per operation)");
      rule.ops.push_back(f.value);
    } else if (f.key == "streams" || f.key == "stream") {
      if (!rule.streams.empty()) throw fail("field '" + f.key + ":' given twice");
      rule.streams = split_pair(f.value);
      if (rule.streams.size() > 2) throw fail("'" + f.key + ":' takes one or two stream names separated by a comma");
      for (const auto& s : rule.streams)
        if (s.empty()) throw fail("'" + f.key + ":' has an empty stream name");
    } else if (f.key == "buffer") {
      set_once(rule.buffer);
    } else if (f.key == "nvtx") {
      set_once(rule.nvtx);
    } else if (f.key == "key") {
      set_once(rule.key);
    } else {
      throw fail("unknown key '" + f.key + ":' (known: op, buffer, streams, nvtx, key)");
    }
  }
  return rule;
}

bool op_matches(const std::string& pattern, const OpRef& op) {
  return glob_match(pattern, op.name) || glob_match(pattern, op.kind);
}

// One pattern: either operation may match. Two: they must match the two operations, in
// either order (a pair is unordered for the user, the finding's first/second is issue order).
template <typename Match>
bool pair_matches(const std::vector<std::string>& patterns, const Finding& f, Match match) {
  if (patterns.empty()) return true;
  if (patterns.size() == 1) return match(patterns[0], f.first) || match(patterns[0], f.second);
  return (match(patterns[0], f.first) && match(patterns[1], f.second)) ||
         (match(patterns[0], f.second) && match(patterns[1], f.first));
}

}  // namespace

SuppressionError::SuppressionError(const std::string& file, int line, const std::string& what)
    : std::runtime_error(file + ":" + std::to_string(line) + ": " + what), file_(file), line_(line) {}

std::vector<SuppressionRule> parse_suppressions(std::istream& in, const std::string& file) {
  std::vector<SuppressionRule> rules;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::string text = trim(strip_comment(line));
    if (!text.empty()) rules.push_back(parse_rule(text, file, line_no));
  }
  return rules;
}

std::vector<SuppressionRule> load_suppressions(const std::string& path) {
  constexpr uint64_t kMaxSuppressionFileBytes = 16ull << 20;  // hand-written rules: far less
  std::string text;
  try {
    text = trace::read_side_file(path, kMaxSuppressionFileBytes);
  } catch (const trace::TraceError& e) {
    throw SuppressionError(path, 0, e.reason());
  }
  std::istringstream in(text);
  return parse_suppressions(in, path);
}

bool rule_matches(const SuppressionRule& rule, const Finding& f) {
  if (rule.kind && *rule.kind != f.kind) return false;
  if (rule.buffer && !glob_match(*rule.buffer, f.buffer.name)) return false;
  if (rule.key && !glob_match(*rule.key, f.key)) return false;
  // NVTX paths as traced or as reports print them (without older tracers' "?" segments).
  auto nvtx_matches = [&](const OpRef& op) {
    return glob_match(*rule.nvtx, op.nvtx) || glob_match(*rule.nvtx, nvtx_path(op.nvtx));
  };
  if (rule.nvtx && !nvtx_matches(f.first) && !nvtx_matches(f.second)) return false;
  if (!pair_matches(rule.ops, f, op_matches)) return false;
  return pair_matches(rule.streams, f, [](const std::string& p, const OpRef& op) { return glob_match(p, op.stream_name); });
}

void apply_suppressions(const std::vector<SuppressionRule>& rules, ReportInput& input) {
  if (rules.empty()) return;
  std::vector<Finding> kept;
  for (Finding& f : input.analysis.findings) {
    auto rule = std::find_if(rules.begin(), rules.end(), [&](const SuppressionRule& r) { return rule_matches(r, f); });
    if (rule == rules.end()) kept.push_back(std::move(f));
    else input.suppressed.push_back({std::move(f), rule->origin});
  }
  input.analysis.findings = std::move(kept);
}

}  // namespace streamhaz::report
