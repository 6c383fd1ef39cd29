// Hostile but decodable traces (found by tests/fuzz/fuzz_analyze.cpp and review): the
// analyzer ends with a result or a TraceError, and never drops accesses silently.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "engine/rank_schedule.h"
#include "scenario.h"

using namespace streamhaz::testing;
namespace analysis = streamhaz::analysis;

TEST_CASE("an access range running past the end of the address space is checked up to the end",
          "[hostile]") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId a = r.stream("a"), b = r.stream("b");
  const uint64_t top = UINT64_MAX - 15;  // 32 bytes from here wrap past 2^64
  r.kernel(a, "_Z6writerv", {writes(top, 32)});
  r.kernel(b, "_Z6readerv", {reads(top, 32)});
  const AnalysisResult result = analyze_run(run);
  REQUIRE(result.findings.size() == 1);
  CHECK(result.findings[0].buffer.bytes == 15);  // [top, 2^64 - 1): the last byte is not representable
}

TEST_CASE("a 2D memset whose rows times pitch overflow is checked, not dropped", "[hostile]") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId a = r.stream("a"), b = r.stream("b");
  const uint64_t buf = r.alloc(4096, "buf");
  Memset m;
  m.op = OpCommon{1000000, a, 0};  // a seq of its own, past the builder's
  m.dst = buf;
  m.width = 1ull << 63;  // width * rows == 0 (mod 2^64)
  m.rows = 2;
  r.add(m);
  r.kernel(b, "_Z6readerv", {reads(buf, 64)});
  const AnalysisResult result = analyze_run(run);
  REQUIRE(findings_on(result, "buf").size() == 1);
}

TEST_CASE("GPU times are looked up once per operation, not once per Timing record", "[hostile][timing]") {
  // A graph launched twice has two Timing records for each of its operations' seqs: the
  // second one must neither replace the first nor end the lookup before the other operation.
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId a = r.stream("a"), b = r.stream("b");
  const uint64_t buf = r.alloc(4096, "buf");
  const uint64_t first = r.kernel(a, "_Z6writerv", {writes(buf, 64)});
  r.add(Timing{first, 900000000, 900001000});  // a later launch's interval for the same seq
  r.kernel(b, "_Z6readerv", {reads(buf, 64)});
  const AnalysisResult result = analyze_run(run);
  const auto found = findings_on(result, "buf");
  REQUIRE(found.size() == 1);
  CHECK(found[0]->first.start_ns != 900000000);
  CHECK(found[0]->second.end_ns != 0);
}

TEST_CASE("the default --jobs uses one thread where threads do not pay", "[hostile][jobs]") {
  AnalysisOptions o;
  o.jobs = 0;  // check's default
  // Below the rank count at which ranks run ahead, threads meet at every collective: slower.
  CHECK(analysis::worker_threads(o, 2) == 1);
  CHECK(analysis::worker_threads(o, o.run_ahead_from_ranks - 1) == 1);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(analysis::worker_threads(o, o.run_ahead_from_ranks) == std::min<unsigned>(cores, o.run_ahead_from_ranks));
  o.jobs = 2;  // asked for: given, up to one per rank
  CHECK(analysis::worker_threads(o, 2) == 2);
}

TEST_CASE("what-if ranks past 2^31 - 1 are refused, not masked", "[hostile][replay]") {
  analysis::WhatIf w;
  CHECK_THROWS_WITH(analysis::parse_what_if("drop rank=2147483648 seq=5", w), Catch::Contains("at most 2147483647"));
  CHECK_THROWS_WITH(analysis::parse_what_if("add-wait rank=4294967296 after=1 before=2", w),
                    Catch::Contains("at most 2147483647"));
  CHECK(w.drop.empty());
  CHECK(w.add.empty());
}

TEST_CASE("what-ifs naming nothing in the run are refused", "[hostile][replay]") {
  TraceBuilder run(2);
  for (int rank = 0; rank < 2; ++rank) {
    auto& r = run.rank(rank);
    const StreamId a = r.stream("a");
    const EventId e = r.event();
    r.kernel(a, "k");
    r.record(e, a);
    r.wait(r.stream("b"), e);
  }
  const auto records = load(run);
  auto check = [&](const std::string& line) {
    analysis::WhatIf w;
    analysis::parse_what_if(line, w);
    analysis::check_what_if_targets(records, w);
  };
  CHECK_THROWS_WITH(check("drop rank=7 seq=1"), Catch::Contains("the run has no rank 7 (its ranks: 0, 1)"));
  CHECK_THROWS_WITH(check("add-wait rank=7 after=1 before=2"), Catch::Contains("no rank 7"));
  CHECK_THROWS_WITH(check("drop rank=0 seq=999"), Catch::Contains("rank 0 has no synchronisation"));
  CHECK_THROWS_WITH(check("drop kind=device-sync"), Catch::Contains("no such synchronisation"));
  CHECK_NOTHROW(check("drop kind=wait"));
  uint64_t wait_seq = 0;
  for (const Record& r : records[0].records)
    if (const auto* w = std::get_if<EventWait>(&r)) wait_seq = w->seq;
  CHECK_NOTHROW(check("drop rank=0 seq=" + std::to_string(wait_seq)));
}
