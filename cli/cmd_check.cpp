// `streamhaz check TRACE...`: the CI gate. Analyses the traces, hides suppressed findings,
// writes a text, JSON or SARIF report and exits 0 (clean), 1 (findings) or 2 (usage error or
// unreadable input). docs/check.md is the user's manual.
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "analysis_flags.h"
#include "commands.h"
#include "memory_limit.h"
#include "messages.h"
#include "output_file.h"
#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/check.h"
#include "streamhaz/report/json_report.h"
#include "streamhaz/report/sarif_report.h"
#include "streamhaz/report/suppressions.h"
#include "streamhaz/report/text_report.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::cli {
namespace {

using analysis::FindingKind;

struct CheckOptions {
  std::vector<std::string> traces;
  std::string format = "text";
  std::string output;  // "" or "-": standard output
  bool force = false;
  std::string suppressions;
  std::string fail_on = "races,truncated";  // over-synchronisation advises; `--fail-on oversync` gates on it
  AnalysisFlags analysis;
  std::string minimal_sync_out;  // write the minimal synchronisation as a what-if spec
  bool full_stacks = false;
  bool sync_notes = false;
  std::string source_root;
  uint64_t memory_limit_mib = 0;  // 0: none
};

// A usage problem found after parsing (bad suppression file, existing output file): one line
// on stderr and exit 2, like CLI11's own errors.
int usage_error(const std::string& what) { return cli::usage_error("check", what); }

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

// What makes the exit status 1: finding kinds, and traces that were not checked completely.
struct FailOn {
  std::set<FindingKind> kinds;
  bool truncated = false;  // a trace cut off (a killed rank): part of the run was never checked
};

// The words of --fail-on, in one table: what each adds.
struct FailOnWord {
  const char* word;
  std::vector<FindingKind> kinds;
  bool truncated;
};
const std::vector<FailOnWord>& fail_on_words() {
  static const std::vector<FailOnWord> words = {
      {"races", {FindingKind::Race}, false},
      {"race", {FindingKind::Race}, false},
      {"possible", {FindingKind::PossibleRace}, false},
      {"oversync", {FindingKind::OverSync}, false},
      {"truncated", {}, true},
      {"all", {FindingKind::Race, FindingKind::PossibleRace, FindingKind::OverSync}, true},
      {"none", {}, false},  // report, never fail
  };
  return words;
}

const FailOnWord* find_fail_on_word(const std::string& word) {
  for (const FailOnWord& w : fail_on_words())
    if (word == w.word) return &w;
  return nullptr;
}

// --fail-on takes one comma-separated word (a vector option would swallow the TRACE arguments).
std::string check_fail_on(const std::string& list) {
  for (const std::string& n : split_commas(list)) {
    if (find_fail_on_word(n)) continue;
    std::string known;
    for (const FailOnWord& w : fail_on_words()) known += (known.empty() ? "" : ", ") + std::string(w.word);
    return "'" + n + "' is not one of " + known;
  }
  return {};
}

FailOn parse_fail_on(const std::string& list) {
  FailOn f;
  for (const std::string& n : split_commas(list)) {
    const FailOnWord* w = find_fail_on_word(n);
    if (!w) continue;  // refused by check_fail_on already
    f.kinds.insert(w->kinds.begin(), w->kinds.end());
    f.truncated |= w->truncated;
  }
  return f;
}

// The traces that were cut off, said once on stderr whatever the format: a CI log must show
// why a run without findings failed, and how much went unchecked.
bool report_truncated(const analysis::AnalysisResult& a, bool fails) {
  uint64_t traces = 0, lost = 0;
  for (const analysis::TraceSummary& t : a.traces) {
    traces += t.truncated;
    lost += t.truncated ? t.records_lost : 0;
  }
  if (!traces) return false;
  std::string what = std::to_string(traces) + " truncated trace(s): the run was not checked completely";
  if (lost) what += " (at least " + std::to_string(lost) + " records lost, more after each rank's last flush)";
  what += fails ? "; failing (--fail-on truncated)" : "; not failing (--fail-on without truncated)";
  cli::warning("check", what);
  return fails;
}

bool writes_to_stdout(const CheckOptions& o) { return o.output.empty() || o.output == "-"; }

std::string render(const report::ReportInput& input, const std::string& format) {
  std::ostringstream out;
  if (format == "json") report::write_json_report(out, input);
  else if (format == "sarif") report::write_sarif_report(out, input);
  else report::write_text_report(out, input);
  return out.str();
}

// Writes `text` into an output made before the analysis; false (with one message) on failure.
bool write_output(OutputFile& file, const std::string& text) {
  try {
    file.stream() << text;
    file.commit();
    return true;
  } catch (const std::runtime_error& e) {
    usage_error(e.what());
    return false;
  }
}

int run_check(const CheckOptions& o) {
  if (o.memory_limit_mib) {
    try {
      limit_memory(o.memory_limit_mib);
    } catch (const std::runtime_error& e) {
      return usage_error(e.what());
    }
  }
  std::vector<report::SuppressionRule> rules;
  if (!o.suppressions.empty()) {
    try {
      rules = report::load_suppressions(o.suppressions);
    } catch (const report::SuppressionError& e) {
      return usage_error(e.what());
    }
  }
  // TraceError (missing, corrupt or foreign file) reaches main(): message with file and offset, exit 2.
  const std::vector<std::string> files = trace::expand_trace_paths(o.traces);
  // The outputs are made now, so that one that cannot be written is refused before a possibly
  // long analysis, not after it; never over an input.
  std::vector<std::string> inputs = files;
  for (const std::string* side : {&o.suppressions, &o.analysis.kernels})
    if (!side->empty()) inputs.push_back(*side);
  std::optional<OutputFile> report_file, minimal_sync_file;
  try {
    if (!writes_to_stdout(o)) report_file.emplace(o.output, o.force, inputs);
    if (!o.minimal_sync_out.empty()) minimal_sync_file.emplace(o.minimal_sync_out, o.force, inputs);
  } catch (const std::runtime_error& e) {
    return usage_error(e.what());
  }

  analysis::CheckResult result = analysis::check(check_request(o.analysis, files));
  if (minimal_sync_file && !write_output(*minimal_sync_file, analysis::format_what_if(result.minimal_sync)))
    return kExitUsage;
  report::ReportInput input;
  input.analysis = std::move(result.analysis);
  input.full_stacks = o.full_stacks;
  input.sync_notes = o.sync_notes;
  input.source_root = o.source_root;
  report::apply_suppressions(rules, input);

  const std::string text = render(input, o.format);
  if (writes_to_stdout(o)) {
    std::cout << text << std::flush;
    // A CI gate must not pass on a report nobody could read (a full disk, a closed pipe).
    if (!std::cout) return usage_error("cannot write the report to standard output");
  } else if (!write_output(*report_file, text)) {
    return kExitUsage;
  }
  // The text report ends with the summary; for the other formats (or a report in a file),
  // CI logs still get the warnings and the one-line verdict on stderr.
  if (o.format != "text" || !writes_to_stdout(o)) {
    cli::warnings("check", input.analysis.warnings);
    std::cerr << report::summary_line(input) << "\n";
  }

  const FailOn fail_on = parse_fail_on(o.fail_on);
  const bool truncated = report_truncated(input.analysis, fail_on.truncated);
  for (const analysis::Finding& f : input.analysis.findings)
    if (fail_on.kinds.count(f.kind)) return kExitFindings;
  return truncated ? kExitFindings : kExitClean;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "check", "Find stream hazards in traces: unordered accesses to the same bytes on different streams");
  auto o = std::make_shared<CheckOptions>();
  cmd->add_option("traces", o->traces, "Trace files, or folders of per-rank *.shz files")
      ->type_name("TRACE")
      ->required();
  cmd->add_option("-f,--format", o->format, "Report format: text (for people), json (for tools), sarif (code scanning)")
      ->check(CLI::IsMember({"text", "json", "sarif"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Write the report to FILE instead of standard output")->type_name("FILE");
  cmd->add_flag("--force", o->force, "Replace the --output and --minimal-sync files if they exist (never an input)");
  cmd->add_option("--suppressions", o->suppressions,
                  "File of rules hiding known findings (by kind, op, buffer, streams, nvtx, key; see docs/check.md)")
      ->type_name("FILE");
  cmd->add_option("--fail-on", o->fail_on,
                  "What makes the exit status 1, comma-separated: races, possible (pairs whose pointer-tier evidence is "
                  "not enough for a race), oversync, "
                  "truncated (a trace cut "
                  "off, so part of the run went unchecked), all or none")
      ->type_name("KINDS")
      ->check(CLI::Validator(check_fail_on, "{races,possible,oversync,truncated,all,none}", "fail-on kinds"))
      ->capture_default_str();
  cmd->add_option("--memory-limit", o->memory_limit_mib,
                  "At most this many MiB for the check (0: no limit); past it, one error naming the trace and "
                  "record, exit 2")
      ->type_name("MIB")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  auto* no_sync = add_analysis_flags(cmd, o->analysis);
  cmd->add_option("--minimal-sync", o->minimal_sync_out,
                  "Write the minimal synchronisation as a what-if spec for `streamhaz replay --what-if @FILE`")
      ->type_name("FILE")
      ->excludes(no_sync);  // --no-sync skips the pass that finds it: nothing would be written
  cmd->add_flag("--sync-notes", o->sync_notes,
                "Text report: one note per synchronisation site judged, and the minimal synchronisation even "
                "without an over-synchronisation finding (by default one line says how many sites were judged; "
                "the JSON report always has both)");
  cmd->add_flag("--full-stacks", o->full_stacks,
                "Text report: show every stack frame (torch internals, the Python standard library, CUDA and "
                "system libraries are folded by default)");
  cmd->add_option("--source-root", o->source_root,
                  "SARIF: give source files under DIR relative to it, so code scanning links them to the repository")
      ->type_name("DIR");
  cmd->footer(
      "Examples:\n"
      "  streamhaz check traces/\n"
      "  streamhaz check traces/ --format sarif -o streamhaz.sarif --suppressions streamhaz.supp\n"
      "Exit status: 0 nothing of the --fail-on kinds, 1 findings of those kinds or (with the default\n"
      "--fail-on) a truncated trace, 2 usage error or an unreadable, corrupt or missing trace (the message\n"
      "names the file and byte offset).");
  cmd->callback([o, &exit_code] { exit_code = run_check(*o); });
}

}  // namespace streamhaz::cli
