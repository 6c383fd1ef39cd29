// The HTML report on hand-made findings and a real (builder-written) timeline: every finding
// field shows, trace names are escaped, the embedded data reads back, and past the detail
// budget the operations are aggregated.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <sstream>

#include "sample_findings.h"
#include "streamhaz/analysis/analyze.h"
#include "streamhaz/report/html_report.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"

namespace fs = std::filesystem;
using namespace streamhaz;
using namespace streamhaz::trace;

namespace {

const char* const kHostile = "void k<</script><script>alert(1)</script>>(\"q\", 'a' & b)\x01";

// One rank, `n` kernels on a stream whose name is hostile, and a race on a buffer.
report::ReportInput analysed(const fs::path& dir, int n) {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId a = r.stream(kHostile), b = r.stream("other stream");
  const uint64_t buf = r.alloc(4096, "ipg_buffer[0]");
  for (int i = 0; i < n; ++i) r.kernel(a, kHostile, {reads(buf, 64)}, 1);
  r.memset(b, buf, 4096);
  fs::remove_all(dir);
  run.write_dir(dir.string());
  report::ReportInput input;
  input.analysis = analysis::analyze(expand_trace_paths({dir.string()}));
  return input;
}

std::string embedded_json(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"timeline-data\">";
  const size_t a = html.find(open);
  REQUIRE(a != std::string::npos);
  const size_t b = html.find("</script>", a);
  return html.substr(a + open.size(), b - a - open.size());
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("html report: every finding field, the sample findings' awkward names escaped") {
  const report::ReportInput input = report::testing::sample_input();
  std::ostringstream out;
  report::write_html_report(out, input, report::Timeline{});
  const std::string html = out.str();
  for (const auto& f : input.analysis.findings) {
    CHECK(html.find(report::kind_id(f.kind)) != std::string::npos);
    CHECK(html.find("data-op=\"" + std::to_string(f.first.rank) + ":" + std::to_string(f.first.seq) + "\"") != std::string::npos);
    CHECK(html.find("data-op=\"" + std::to_string(f.second.rank) + ":" + std::to_string(f.second.seq) + "\"") != std::string::npos);
  }
  CHECK(html.find("Missing order") != std::string::npos);
  CHECK(html.find("Suppressed findings (1)") != std::string::npos);
  // Exactly the report's own two script blocks, and no network: a policy allows nothing else.
  CHECK(count(html, "<script") == 2);
  CHECK(count(html, "</script>") == 2);
  CHECK(html.find("default-src 'none'") != std::string::npos);
  CHECK(count(html, "://") == count(html, "http://www.w3.org/2000/svg"));
  CHECK(html.find("https://") == std::string::npos);
}

TEST_CASE("html report: hostile trace names stay text in the page and in the embedded data") {
  const auto dir = fs::temp_directory_path() / ("streamhaz-html-" + std::to_string(::getpid()));
  const report::ReportInput input = analysed(dir, 3);
  const report::Timeline timeline = report::load_timeline(input.analysis.traces);
  fs::remove_all(dir);
  REQUIRE_FALSE(input.analysis.findings.empty());
  std::ostringstream out;
  report::write_html_report(out, input, timeline);
  const std::string html = out.str();
  CHECK(count(html, "<script") == 2);
  CHECK(count(html, "</script>") == 2);
  CHECK(html.find("alert(1)") != std::string::npos);  // shown, as text
  CHECK(html.find("&lt;/script&gt;&lt;script&gt;alert(1)") != std::string::npos);
  const auto data = nlohmann::json::parse(embedded_json(html));
  CHECK(data["ranks"][0]["streams"][0]["name"] == kHostile);
  CHECK(data["ranks"][0]["ops"].size() == 8 * 4);
  CHECK(data["findings"].size() == input.analysis.findings.size());
}

TEST_CASE("html report: past the detail budget, operations near the findings are drawn and the rest aggregated") {
  const auto dir = fs::temp_directory_path() / ("streamhaz-html-big-" + std::to_string(::getpid()));
  const report::ReportInput input = analysed(dir, 5000);
  const report::Timeline timeline = report::load_timeline(input.analysis.traces);
  fs::remove_all(dir);
  report::HtmlReportOptions options;
  options.detail_ops = 400;
  std::ostringstream out;
  const auto stats = report::write_html_report(out, input, timeline, options);
  CHECK(stats.ops_detailed + stats.ops_aggregated == 5001);
  CHECK(stats.ops_detailed <= options.detail_ops + 1);
  CHECK(stats.ops_detailed > 0);
  CHECK(stats.bins > 0);
  const auto data = nlohmann::json::parse(embedded_json(out.str()));
  uint64_t aggregated = 0;
  const auto& agg = data["ranks"][0]["agg"];
  for (size_t i = 3; i < agg.size(); i += 4) aggregated += agg[i].get<uint64_t>();
  CHECK(aggregated == stats.ops_aggregated);
  // The finding's operations are among those drawn.
  for (const auto& ref : data["findings"][0]["ops"]) CHECK(ref[1].get<int64_t>() >= 0);
}
