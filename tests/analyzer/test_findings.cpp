// Findings: keys stable across steps and runs, folding, the missing-order sentence,
// footprint tiers, and inputs (truncated or foreign traces, counts).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>

#include "two_streams.h"
#include "zero2_scenario.h"

using namespace streamhaz::testing;

TEST_CASE("finding keys do not depend on addresses, seqs or step count", "[findings]") {
  Zero2Options three, five;
  five.steps = 5;
  auto a = analyze_run(zero2(three));
  auto b = analyze_run(zero2(five));
  REQUIRE(a.findings.size() == b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) {
    CHECK(a.findings[i].key == b.findings[i].key);
    CHECK(b.findings[i].occurrences * 3 == a.findings[i].occurrences * 5);
  }
}

TEST_CASE("missing order names both streams, both operations and their seqs", "[findings]") {
  TwoStreams t;
  uint64_t w = t.produce(t.a);
  uint64_t rd = t.consume(t.b);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].missing_order ==
        "stream B must wait for an event recorded on stream A after kernel producer (seq " + std::to_string(w) +
            ") before kernel consumer (seq " + std::to_string(rd) +
            "): cudaEventRecord(ev, stream A) after kernel producer, cudaStreamWaitEvent(stream B, ev) before "
            "kernel consumer");
  CHECK(res.findings[0].first.seq == w);
  CHECK(res.findings[0].second.seq == rd);
  CHECK(res.findings[0].first.rank == 0);
}

TEST_CASE("a finding is as precise as its less precise operation", "[findings]") {
  TwoStreams t;
  t.r.kernel(t.a, "summarised", {writes(t.buf, 4096)}, 10, FootprintTier::Static);
  t.r.kernel(t.b, "instrumented", {reads(t.buf, 4096)}, 10, FootprintTier::Exact);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].tier == FootprintTier::Static);
  CHECK_FALSE(res.findings[0].exact);
}

TEST_CASE("a footprint the launch memo reused ranks below the exact tier, and is counted apart", "[findings]") {
  TwoStreams t;
  t.r.kernel(t.a, "served_by_memo", {writes(t.buf, 4096)}, 10, FootprintTier::Memo);
  t.r.kernel(t.b, "instrumented", {reads(t.buf, 4096)}, 10, FootprintTier::Exact);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].kind == streamhaz::analysis::FindingKind::Race);  // observed bytes: a race, not a possible one
  CHECK(res.findings[0].tier == FootprintTier::Memo);
  CHECK(res.findings[0].exact);
  CHECK(res.kernels_by_tier[size_t(FootprintTier::Memo)] == 1);
  CHECK(res.kernels_by_tier[size_t(FootprintTier::Exact)] == 1);
}

TEST_CASE("a memo footprint is more precise than a static summary", "[findings]") {
  TwoStreams t;
  t.r.kernel(t.a, "summarised", {writes(t.buf, 4096)}, 10, FootprintTier::Static);
  t.r.kernel(t.b, "served_by_memo", {reads(t.buf, 4096)}, 10, FootprintTier::Memo);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].tier == FootprintTier::Static);
}

TEST_CASE("kernels without a footprint only order, and are counted", "[findings]") {
  TwoStreams t;
  t.r.kernel(t.a, "opaque");
  t.consume(t.b);
  auto res = t.analyze();
  CHECK(res.findings.empty());
  CHECK(res.operations_checked == 2);
  CHECK(res.operations_without_footprint == 1);
  REQUIRE(res.traces.size() == 1);
  CHECK(res.traces[0].operations == 2);
  CHECK(res.traces[0].rank == 0);
  CHECK_FALSE(res.traces[0].truncated);
}

TEST_CASE("host memory used by copies on two streams can race", "[findings]") {
  TwoStreams t;
  uint64_t pinned = t.r.host_alloc(4096, true);
  t.r.memcpy(t.a, pinned, t.buf, 4096, MemcpyKind::DeviceToHost);
  t.r.memcpy(t.b, t.buf, pinned, 4096, MemcpyKind::HostToDevice);  // reads host bytes being written
  auto res = t.analyze();
  // The pinned buffer (RAW) and buf (WAR: the HtoD overwrites what the DtoH still reads).
  REQUIRE(res.findings.size() == 2);
  CHECK(findings_on(res, "buf").size() == 1);
}

TEST_CASE("a truncated trace is analysed up to its last whole chunk, with a warning", "[findings]") {
  TwoStreams t;
  for (int i = 0; i < 20000; ++i) t.produce(t.a);
  const auto dir = fresh_dir();
  t.run.write_dir(dir.string());
  const auto file = dir / "rank0.shz";
  std::filesystem::resize_file(file, std::filesystem::file_size(file) * 2 / 3);
  auto res = streamhaz::analysis::analyze({file.string()});
  std::filesystem::remove_all(dir);
  REQUIRE(res.traces.size() == 1);
  CHECK(res.traces[0].truncated);
  CHECK(res.operations_checked > 0);
  CHECK(res.operations_checked < 20000);
  REQUIRE(res.warnings.size() == 1);
  CHECK(res.warnings[0].find("truncated") != std::string::npos);
}

TEST_CASE("a trace whose tracer dropped records is analysed with a warning saying how many", "[findings]") {
  TwoStreams t;
  t.produce(t.a);
  t.r.set_header_field("dropped_records", 3);
  auto res = t.analyze();
  REQUIRE(res.traces.size() == 1);
  CHECK(res.traces[0].dropped_records == 3);
  REQUIRE(res.warnings.size() == 1);
  CHECK_THAT(res.warnings[0], Catch::Contains("dropped 3 records"));
}

TEST_CASE("an exact-tier trace with kernels known only by their pointers says so, once per trace", "[findings]") {
  TwoStreams t;
  t.r.set_header_field("footprints", "exact");
  t.r.kernel(t.a, "served_by_memo", {writes(t.buf, 4096)}, 10, FootprintTier::Memo);
  t.r.kernel(t.b, "ran_bare", {pointer_arg(t.buf)}, 10, FootprintTier::Pointer);
  t.r.kernel(t.b, "ran_bare_too", {pointer_arg(t.buf + 64)}, 10, FootprintTier::Pointer);
  auto res = t.analyze();
  REQUIRE(res.traces.size() == 1);
  CHECK(res.traces[0].exact_tier_pointer_only == 2);
  REQUIRE(res.warnings.size() == 1);
  CHECK_THAT(res.warnings[0], Catch::Contains("2 kernel launch(es) of this exact-tier trace have only pointer-tier "
                                              "footprints") &&
                                  Catch::Contains("--exact-launches every"));
}

TEST_CASE("pointer-only kernels of a pointer-tier trace are the tier itself: no warning", "[findings]") {
  TwoStreams t;
  t.r.set_header_field("footprints", "pointer");
  t.r.kernel(t.b, "pointer_only", {pointer_arg(t.buf)}, 10, FootprintTier::Pointer);
  auto res = t.analyze();
  CHECK(res.traces[0].exact_tier_pointer_only == 0);
  CHECK(res.warnings.empty());
}

TEST_CASE("a file that is not a trace throws TraceError", "[findings]") {
  const auto dir = fresh_dir();
  std::filesystem::create_directories(dir);
  const auto file = dir / "junk.shz";
  std::ofstream(file) << "this is not a trace";
  CHECK_THROWS_AS(streamhaz::analysis::analyze({file.string()}), TraceError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a trace without a rank never takes the rank of another trace", "[findings]") {
  // The second file has no "rank" in its header and stood in as rank 1 (its position), the
  // rank the first file declares: both rank engines were rank 1, and the second file's
  // findings said "rank 1" and took their GPU times from the first file.
  const auto dir = fresh_dir();
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& file, std::optional<int> rank, const std::string& kernel, double us) {
    TraceBuilder run(1);
    RankTraceBuilder& r = run.rank(0);
    StreamId a = r.stream("stream A"), b = r.stream("stream B");
    uint64_t buf = r.alloc(4096, "buf");
    r.host_gap(us);
    r.kernel(a, kernel, {writes(buf, 4096)}, us);
    r.kernel(b, "consumer", {reads(buf, 4096)}, us);
    nlohmann::json header = r.header();
    if (rank) header["rank"] = *rank;
    else header.erase("rank");
    TraceFileWriter w((dir / file).string(), header);
    for (const Record& rec : r.records()) w.add(rec);
    return (dir / file).string();
  };
  const std::string declared = write("a.shz", 1, "producer in the rank-1 file", 10);
  const std::string unranked = write("b.shz", std::nullopt, "producer in the unranked file", 500);
  const AnalysisResult res = streamhaz::analysis::analyze({declared, unranked}, {});
  std::filesystem::remove_all(dir);

  REQUIRE(res.traces.size() == 2);
  CHECK(res.traces[0].rank == 1);
  CHECK(res.traces[1].rank != 1);
  REQUIRE(res.findings.size() == 2);
  for (const Finding& f : res.findings) {
    const bool from_unranked = f.first.name == "producer in the unranked file";
    CHECK(f.first.rank == (from_unranked ? res.traces[1].rank : 1));
    // GPU times come from the finding's own file (the unranked one ran 500 µs kernels).
    CHECK((f.first.end_ns - f.first.start_ns == (from_unranked ? 500000u : 10000u)));
  }
}

TEST_CASE("without race findings the unordered pairs still reach on_conflict", "[findings]") {
  TwoStreams s;
  const uint64_t producer = s.produce(s.a);
  const uint64_t consumer = s.consume(s.b);
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  AnalysisOptions o;
  o.on_conflict = [&](int, uint64_t first, uint64_t second, uint64_t) { pairs.emplace_back(first, second); };
  require_producer_consumer_race(s.analyze(o));
  REQUIRE(pairs.size() == 1);
  o.race_findings = false;
  pairs.clear();
  CHECK(s.analyze(o).findings.empty());
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0] == std::pair{producer, consumer});
}
