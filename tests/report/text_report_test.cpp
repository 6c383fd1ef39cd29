#include <sstream>

#include <catch2/catch.hpp>

#include "sample_findings.h"
#include "streamhaz/report/text_report.h"

using namespace streamhaz::report;
using Catch::Contains;

namespace {

std::string text_of(const ReportInput& input) {
  std::ostringstream out;
  write_text_report(out, input);
  return out.str();
}

}  // namespace

TEST_CASE("text: a race block names both operations, the buffer and the fix") {
  std::string text = text_of(testing::sample_input());
  CHECK_THAT(text, Contains("streamhaz: race: write-after-read race on ipg_buffer[0]"));
  // The later access first, ThreadSanitizer style, then the previous one.
  CHECK_THAT(text, Contains("  Write of ipg_buffer[0] by rank 0, stream \"compute stream\" (id 2):\n"
                            "    memcpy DtoD cudaMemcpyAsync  [seq 57]\n"
                            "    NVTX: step/backward\n"));
  CHECK_THAT(text, Contains("  Previous read-write of ipg_buffer[0] by rank 0, stream "
                            "\"reduction stream\" (id 3):\n    ncclAllReduce  [seq 40]\n    NVTX: step/average_tensor\n"));
  // Folded findings hold the union of their occurrences' bytes, and say so.
  CHECK_THAT(text, Contains("Buffer: ipg_buffer[0] (allocation 0x7f0000000000, 8192 bytes), conflicting bytes [256, 4352) "
                            "over all 12 occurrences\n"));
  CHECK_THAT(text, Contains("Missing order: cudaStreamWaitEvent(compute stream, <event recorded on reduction stream"));
  CHECK_THAT(text, Contains("overlapping in time"));
  CHECK_THAT(text, Contains("Occurrences: 12 (ranks 0, 1)"));
  CHECK_THAT(text, Contains("Footprint: api tier, exact byte ranges"));
  CHECK_THAT(text, Contains("Key: race:memcpy DtoD@compute stream"));
}

TEST_CASE("text: a memo-tier footprint says where its bytes were observed, and is counted") {
  ReportInput in = testing::sample_input();
  in.analysis.findings.resize(1);
  in.analysis.findings[0].tier = streamhaz::trace::FootprintTier::Memo;
  in.analysis.kernels_by_tier[size_t(streamhaz::trace::FootprintTier::Memo)] = 7;
  in.analysis.kernels_by_tier[size_t(streamhaz::trace::FootprintTier::Exact)] = 3;
  std::string text = text_of(in);
  CHECK_THAT(text, Contains("Footprint: memo tier, exact byte ranges (instrumented on an identical earlier launch)\n"));
  CHECK_THAT(text, Contains("(kernels: 3 exact, 7 memo"));
}

TEST_CASE("text: a single occurrence gives its byte range without a fold note") {
  ReportInput in = testing::sample_input();
  in.analysis.findings.resize(1);
  in.analysis.findings[0].occurrences = 1;
  std::string text = text_of(in);
  CHECK_THAT(text, Contains("conflicting bytes [256, 4352)\n"));
  CHECK_THAT(text, !Contains("over all"));
}

TEST_CASE("text: a pointer-tier access names the byte its argument points at, not an extent") {
  ReportInput in = testing::sample_input();
  in.analysis.findings.resize(1);
  in.analysis.findings[0].occurrences = 1;
  in.analysis.findings[0].tier = streamhaz::trace::FootprintTier::Pointer;
  in.analysis.findings[0].buffer.bytes = 1;
  std::string text = text_of(in);
  CHECK_THAT(text, Contains("conflicting byte 256, where a launch argument points (the kernel's extent is unknown)\n"));
  CHECK_THAT(text, !Contains("[256, 257)"));
}

TEST_CASE("text: an over-synchronisation block keeps names on one line") {
  std::string text = text_of(testing::sample_input());
  CHECK_THAT(text, Contains("streamhaz: oversync: compute stream waits for the whole reduction stream"));
  CHECK_THAT(text, Contains("    kernel void scale<float, \"q\">(float*, int)\\x0aEVIL  [seq 70]\n"));
  CHECK_THAT(text, Contains("Footprint: static tier, approximate byte ranges"));
  CHECK_THAT(text, Contains("Detail: stalled the compute stream 1.2 ms per step"));
  CHECK_THAT(text, Contains("Proposal: record one event per IPG buffer instead"));
}

TEST_CASE("text: every finding is one delimited block, warnings and summary at the end") {
  std::string text = text_of(testing::sample_input());
  size_t rules = 0;
  for (size_t at = text.find("=================="); at != std::string::npos; at = text.find("==================", at + 1))
    ++rules;
  CHECK(rules == 4);
  CHECK_THAT(text, Contains("warning: traces/zero2 run/rank1.shz: truncated at byte 9000"));
  CHECK_THAT(text, Contains("streamhaz: 1 race and 1 over-synchronisation in 2 traces, 238 operations checked "
                            "(kernels: 4 without footprint: ordering only); 1 suppressed; 1 warning\n"));
}

TEST_CASE("text: a clean result is one summary line") {
  ReportInput clean;
  clean.analysis.traces = {{.path = "r0.shz", .rank = 0}};
  clean.analysis.operations_checked = 10;
  CHECK(text_of(clean) == "streamhaz: no findings in 1 trace, 10 operations checked\n");
}

TEST_CASE("text: the summary says how many kernels each footprint tier covered") {
  ReportInput in;
  in.analysis.traces = {{.path = "r0.shz", .rank = 0}};
  in.analysis.operations_checked = 10;
  in.analysis.kernels_by_tier[size_t(streamhaz::trace::FootprintTier::Exact)] = 3;
  in.analysis.kernels_by_tier[size_t(streamhaz::trace::FootprintTier::Pointer)] = 2;
  in.analysis.operations_without_footprint = 1;
  CHECK(text_of(in) == "streamhaz: no findings in 1 trace, 10 operations checked "
                       "(kernels: 3 exact, 2 pointer only, 1 without footprint: ordering only)\n");
}

TEST_CASE("text: printable escapes control characters and backslashes") {
  CHECK(printable("a\tb\x1b[31m<>\"") == "a\\x09b\\x1b[31m<>\"");
  CHECK(printable("a\\b\xc2\x9b") == "a\\\\b\\u009b");
}
