// `streamhaz report TRACE... -o report.html`: the findings and a timeline of every rank's
// streams in one self-contained HTML file. docs/report.md is the user's manual.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "analysis_flags.h"
#include "commands.h"
#include "messages.h"
#include "output_file.h"
#include "streamhaz/analysis/check.h"
#include "streamhaz/report/html_report.h"
#include "streamhaz/report/suppressions.h"
#include "streamhaz/report/text_report.h"
#include "streamhaz/report/timeline.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> traces;
  std::string output;
  bool force = false;
  std::string suppressions;
  AnalysisFlags analysis;
  uint64_t detail_ops = report::HtmlReportOptions{}.detail_ops;
};

int usage_error(const std::string& what) { return cli::usage_error("report", what); }

int run_report(const ReportOptions& o) {
  std::vector<report::SuppressionRule> rules;
  try {
    if (!o.suppressions.empty()) rules = report::load_suppressions(o.suppressions);
  } catch (const report::SuppressionError& e) {
    return usage_error(e.what());
  }
  const bool to_stdout = o.output == "-";
  const std::vector<std::string> files = trace::expand_trace_paths(o.traces);
  // Refuse before a possibly long analysis, not after it; never over an input.
  std::optional<OutputFile> file;
  if (!to_stdout) {
    std::vector<std::string> inputs = files;
    for (const std::string* side : {&o.suppressions, &o.analysis.kernels})
      if (!side->empty()) inputs.push_back(*side);
    try {
      file.emplace(o.output, o.force, inputs);
    } catch (const std::runtime_error& e) {
      return usage_error(e.what());
    }
  }

  // The same pipeline as check: the race check, over-synchronisation, stacks; then suppressions.
  report::ReportInput input;
  input.analysis = analysis::check(check_request(o.analysis, files)).analysis;
  report::apply_suppressions(rules, input);
  const report::Timeline timeline = report::load_timeline(input.analysis.traces);

  report::HtmlReportOptions html;
  html.detail_ops = o.detail_ops;
  report::HtmlReportStats stats;
  if (to_stdout) {
    stats = report::write_html_report(std::cout, input, timeline, html);
    std::cout.flush();
    if (!std::cout) return usage_error("cannot write the report to standard output");
  } else {
    try {
      stats = report::write_html_report(file->stream(), input, timeline, html);
      file->commit();
    } catch (const std::runtime_error& e) {
      return usage_error(e.what());
    }
  }
  warnings("report", input.analysis.warnings);
  std::cerr << report::summary_line(input) << "\n";
  if (!to_stdout) {
    std::string wrote = fmt::format("wrote {} ({} operations drawn", o.output, stats.ops_detailed);
    if (stats.ops_aggregated) wrote += fmt::format(", {} aggregated into {} bins", stats.ops_aggregated, stats.bins);
    say("report", wrote + ")");
  }
  return kExitClean;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "Write an HTML report: findings and a timeline of every rank's streams");
  auto o = std::make_shared<ReportOptions>();
  cmd->add_option("traces", o->traces, "Trace files, or folders of per-rank *.shz files")->type_name("TRACE")->required();
  cmd->add_option("-o,--output", o->output, "The HTML file to write (- for standard output)")->type_name("FILE")->required();
  cmd->add_flag("--force", o->force, "Replace the --output file if it exists (never an input)");
  cmd->add_option("--suppressions", o->suppressions, "File of rules hiding known findings (as for check)")->type_name("FILE");
  add_analysis_flags(cmd, o->analysis);
  cmd->add_option("--detail-ops", o->detail_ops,
                  "Operations drawn one by one; beyond this, those nearest the findings are and the rest are "
                  "aggregated into time bins per stream")
      ->type_name("N")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}))
      ->capture_default_str();
  cmd->footer(
      "The file needs no network and opens in any browser: summary, every finding with its operations,\n"
      "buffer and missing order, and a zoomable timeline of each rank's streams (GPU times; operations\n"
      "without one are placed by API order and drawn hatched).\n"
      "Example:\n"
      "  streamhaz report traces/race-2gpu-delay -o race.html\n"
      "Exit status: 0 the report was written (with or without findings: use check to gate), 2 usage error,\n"
      "an existing output without --force, or an unreadable, corrupt or missing trace.");
  cmd->callback([o, &exit_code] { exit_code = run_report(*o); });
}

}  // namespace streamhaz::cli
