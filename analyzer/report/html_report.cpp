// The HTML page: summary and findings as static HTML (readable without JavaScript), and the
// timeline drawn by an embedded script from embedded JSON. Every trace-given string passes
// through html_text() or script_json(); a Content-Security-Policy forbids any network access
// and any script but the report's own.
#include "streamhaz/report/html_report.h"

#include <random>

#include <fmt/format.h>

#include "html_timeline_data.h"
#include "report_assets.h"
#include "streamhaz/report/stack_text.h"
#include "streamhaz/report/text_report.h"
#include "web_escape.h"

namespace streamhaz::report {
namespace {

using analysis::Finding;
using analysis::FindingKind;
using analysis::OpRef;

std::string nonce() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

std::string duration_text(uint64_t ns) {
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1'000) return fmt::format("{:.1f} µs", ns / 1e3);
  return fmt::format("{} ns", ns);
}

void write_op_row(std::ostream& out, const char* which, const OpRef& op) {
  const std::string stream = op.on_host ? "the host (no stream)" : fmt::format("{} (id {})", op.stream_name, op.stream);
  const bool timed = op.end_ns > op.start_ns;
  out << fmt::format("<tr class=\"op-row\" data-op=\"{}:{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                     op.rank, op.seq, which, op.rank, html_text(stream), html_text(op.kind));
  out << "<td class=\"name\">" << html_text(op.name == op.kind ? "" : op.name) << "</td>";
  out << fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", op.seq, trace::to_string(op.role),
                     html_text(nvtx_path(op.nvtx)), timed ? duration_text(op.end_ns - op.start_ns) : "not timed");
}

// A stack as a collapsible list: user frames shown, library internals folded (as in the text
// report), every frame in the <details> below.
void write_stack(std::ostream& out, const char* what, const analysis::Stack& stack) {
  if (stack.empty()) return;
  out << "<dt>" << what << "</dt><dd><ol class=\"stack\">";
  for (const std::string& line : stack_lines(stack, false)) out << "<li>" << html_text(line) << "</li>";
  out << "</ol><details><summary>all " << stack.size() << " frames</summary><ol class=\"stack\">";
  for (const std::string& line : stack_lines(stack, true)) out << "<li>" << html_text(line) << "</li>";
  out << "</ol></details></dd>\n";
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

void write_finding(std::ostream& out, const Finding& f, size_t index, const char* id_prefix, bool focusable) {
  const char* kind = kind_id(f.kind);
  out << fmt::format("<section class=\"finding kind-{0}\" id=\"{1}{2}\" data-finding=\"{2}\">\n", kind, id_prefix, index);
  out << fmt::format("<h3><span class=\"badge {0}\">{0}</span> {1}</h3>\n", kind, html_text(f.title));
  out << "<table class=\"ops\"><tr><th></th><th>rank</th><th>stream</th><th>kind</th><th>name</th><th>seq</th>"
         "<th>role</th><th>NVTX range</th><th>GPU time</th></tr>\n";
  write_op_row(out, "issued first", f.first);
  write_op_row(out, "issued later", f.second);
  out << "</table>\n<dl>\n";
  const analysis::BufferRef& b = f.buffer;
  out << "<dt>Buffer</dt><dd>" << html_text(b.name);
  if (b.alloc_base) out << fmt::format(" (allocation {:#x}, {} bytes)", b.alloc_base, b.alloc_bytes);
  out << fmt::format(", conflicting bytes [{}, {})</dd>\n", b.offset, b.offset + b.bytes);
  if (b.tensor)
    out << fmt::format("<dt>Tensor</dt><dd>block {:#x}, {} bytes, from PyTorch's allocator history; conflicting bytes "
                       "[{}, {}) of it</dd>\n",
                       b.tensor, b.tensor_bytes, b.alloc_base + b.offset - b.tensor, b.alloc_base + b.offset - b.tensor + b.bytes);
  if (b.allocation && !b.alloc_stack.empty() && b.caching_allocator)
    out << "<dt>Allocation</dt><dd>a PyTorch caching-allocator segment serving many tensors; its stack is the "
           "first request's, not necessarily this tensor's</dd>\n";
  if (!b.tensor && !b.tensor_unknown.empty())
    out << "<dt>Tensor</dt><dd>this tensor's own line is unknown: " << html_text(b.tensor_unknown) << "</dd>\n";
  write_stack(out, "Stack, issued later", f.second.stack);
  write_stack(out, "Stack, issued first", f.first.stack);
  write_stack(out, "Tensor allocation stack", b.tensor_stack);
  write_stack(out, b.caching_allocator ? "Segment allocation stack" : "Allocation stack", b.alloc_stack);
  write_stack(out, "Synchronisation stack", f.sync_stack);
  if (!f.missing_order.empty()) out << "<dt>Missing order</dt><dd class=\"missing\">" << html_text(f.missing_order) << "</dd>\n";
  out << fmt::format("<dt>Occurrences</dt><dd>{} (ranks {})</dd>\n", f.occurrences, ranks_text(f.ranks));
  out << fmt::format("<dt>Footprint</dt><dd>{} tier, {} byte ranges</dd>\n", trace::to_string(f.tier),
                     f.exact ? "exact" : "approximate");
  if (!f.detail.empty()) out << "<dt>Detail</dt><dd>" << html_text(f.detail) << "</dd>\n";
  out << "<dt>Key</dt><dd><code>" << html_text(f.key) << "</code></dd>\n</dl>\n";
  if (focusable) out << fmt::format("<button type=\"button\" class=\"show\" data-focus=\"{}\">Show in timeline</button>\n", index);
  out << "</section>\n";
}

void write_summary(std::ostream& out, const ReportInput& input, const Timeline& timeline, const HtmlReportStats& stats) {
  const auto& a = input.analysis;
  out << "<section id=\"summary\">\n<p class=\"verdict\">" << html_text(summary_line(input)) << "</p>\n";
  out << "<table class=\"traces\"><tr><th>rank</th><th>trace</th><th>records</th><th>operations</th>"
         "<th>GPU times</th><th>state</th></tr>\n";
  for (const auto& t : a.traces) {
    std::string gpu_times = "";
    for (const RankTimeline& r : timeline.ranks)
      if (r.rank == t.rank) {
        gpu_times = r.gpu_times;
        if (r.order_only) gpu_times += " (none recorded: placed by API order)";
        else if (r.untimed_ops) gpu_times += fmt::format(" ({} of {} operations placed by order only)", r.untimed_ops, r.ops.size());
      }
    out << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", t.rank,
                       html_text(t.path), t.records, t.operations, html_text(gpu_times),
                       t.truncated ? "truncated: " + html_text(t.truncation) : "complete");
  }
  out << "</table>\n";
  if (!a.warnings.empty()) {
    out << "<h3>Warnings</h3><ul class=\"warnings\">\n";
    for (const std::string& w : a.warnings) out << "<li>" << html_text(w) << "</li>\n";
    out << "</ul>\n";
  }
  if (stats.ops_aggregated)
    out << fmt::format("<p class=\"note\">The timeline draws {} operations one by one (those nearest the findings) and "
                       "{} more aggregated into {} time bins per stream.</p>\n",
                       stats.ops_detailed, stats.ops_aggregated, stats.bins);
  out << "</section>\n";
}

void write_timeline_section(std::ostream& out, const Timeline& timeline, const std::string& data, const std::string& nonce) {
  out << "<section id=\"timeline-section\">\n<h2>Timeline</h2>\n"
         "<div class=\"toolbar\"><button type=\"button\" id=\"zoom-fit\">Fit</button>"
         "<button type=\"button\" id=\"zoom-in\">Zoom in</button><button type=\"button\" id=\"zoom-out\">Zoom out</button>"
         "<span id=\"view-range\"></span>"
         "<span class=\"legend\"><i class=\"k\"></i>kernel <i class=\"c\"></i>copy <i class=\"s\"></i>memset "
         "<i class=\"n\"></i>NCCL <i class=\"o\"></i>other <i class=\"race\"></i>finding's operation "
         "<i class=\"u\"></i>placed by order (no GPU time) <i class=\"w\"></i>GPU-times window "
         "<b class=\"wait\">&#8594;</b> event wait <b class=\"missing\">&#8594;</b> missing order</span></div>\n";
  if (timeline.untimed_ops())
    out << fmt::format("<p class=\"note\">{} operations have no GPU time (GPU times were sampled or off); they are "
                       "drawn hatched, placed by API order between their timed neighbours. Shaded bands are the "
                       "windows in which GPU times were recorded.</p>\n",
                       timeline.untimed_ops());
  out << "<p class=\"hint\">Wheel: zoom around the pointer. Drag: pan. Hover: details.</p>\n"
         "<div id=\"timeline-box\"><svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\"></svg></div>\n"
         "<noscript><p>The timeline needs JavaScript; the findings below are complete without it.</p></noscript>\n"
         "<script type=\"application/json\" id=\"timeline-data\">"
      << data << "</script>\n<script nonce=\"" << nonce << "\">\n" << kReportJs << "\n</script>\n</section>\n";
}

}  // namespace

HtmlReportStats write_html_report(std::ostream& out, const ReportInput& input, const Timeline& timeline,
                                  const HtmlReportOptions& options) {
  TimelineDataStats data_stats;
  const std::string data = script_json(timeline_data(input, timeline, options.detail_ops, data_stats));
  const HtmlReportStats stats{data_stats.ops_detailed, data_stats.ops_aggregated, data_stats.bins};
  const std::string n = nonce();
  const auto& findings = input.analysis.findings;

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'nonce-" << n
      << "'; style-src 'nonce-" << n << "'; img-src data:\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << html_text(fmt::format("streamhaz report: {} finding{}", findings.size(), findings.size() == 1 ? "" : "s"))
      << "</title>\n<style nonce=\"" << n << "\">\n" << kReportCss << "\n</style>\n</head>\n<body>\n"
      << "<header><h1>streamhaz report</h1></header>\n";
  write_summary(out, input, timeline, stats);
  write_timeline_section(out, timeline, data, n);
  out << fmt::format("<section id=\"findings\">\n<h2>Findings ({})</h2>\n", findings.size());
  if (findings.empty()) out << "<p>No findings.</p>\n";
  for (size_t i = 0; i < findings.size(); ++i) write_finding(out, findings[i], i, "finding-", true);
  out << "</section>\n";
  if (!input.suppressed.empty()) {
    out << fmt::format("<section id=\"suppressed\">\n<details><summary>Suppressed findings ({})</summary>\n",
                       input.suppressed.size());
    for (size_t i = 0; i < input.suppressed.size(); ++i) {
      const auto& s = input.suppressed[i];
      out << "<p class=\"rule\">Suppressed by " << html_text(fmt::format("{}:{}: {}", s.rule.file, s.rule.line, s.rule.text))
          << "</p>\n";
      write_finding(out, s.finding, i, "suppressed-", false);
    }
    out << "</details>\n</section>\n";
  }
  out << "<footer>streamhaz " << html_text(input.tool_version) << "</footer>\n</body>\n</html>\n";
  return stats;
}

}  // namespace streamhaz::report
