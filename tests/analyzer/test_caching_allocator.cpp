// PyTorch's caching allocator never calls cudaFree: a block used on a side stream and handed
// out again on the main stream is reused without any CUDA call. Only an event wait, or a
// successful event query before the reuse (what record_stream does), orders the two uses.
#include <catch2/catch.hpp>

#include "scenario.h"

using namespace streamhaz::testing;

namespace {
enum class BeforeReuse { Nothing, EventWait, QuerySuccess, QueryNotReady };

TraceBuilder caching_allocator(BeforeReuse guard) {
  TraceBuilder run(1);
  RankTraceBuilder& r = run.rank(0);
  StreamId main = r.stream("main stream"), side = r.stream("side stream");
  const uint64_t segment = r.alloc(1 << 20);  // the allocator's segment: unnamed
  const uint64_t block = segment + 8192;
  EventId filled = r.event(), side_done = r.event();
  r.kernel(main, "fill", {writes(block, 4096)});
  r.record(filled, main);
  r.wait(side, filled);
  r.kernel(side, "side_reader", {reads(block, 4096)});
  // The tensor dies; the allocator records an event on the side stream (record_stream).
  r.record(side_done, side);
  switch (guard) {
    case BeforeReuse::Nothing: break;
    case BeforeReuse::EventWait: r.wait(main, side_done); break;
    case BeforeReuse::QuerySuccess: r.event_query(side_done, true); break;
    case BeforeReuse::QueryNotReady: r.event_query(side_done, false); break;
  }
  r.kernel(main, "reuse_writer", {writes(block, 4096)});
  return run;
}

void require_reuse_race(const AnalysisResult& res) {
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.title.rfind("write-after-read race on allocation 0x", 0) == 0);
  CHECK(f.first.name == "side_reader");
  CHECK(f.first.stream_name == "side stream");
  CHECK(f.second.name == "reuse_writer");
  CHECK(f.second.stream_name == "main stream");
  CHECK(f.buffer.offset == 8192);
  CHECK(f.buffer.bytes == 4096);
  CHECK(f.buffer.alloc_bytes == 1 << 20);
  CHECK(f.key.find("0x") == std::string::npos);  // keys carry no addresses
}
}  // namespace

TEST_CASE("caching allocator: reuse on the main stream without ordering races", "[allocator]") {
  require_reuse_race(analyze_run(caching_allocator(BeforeReuse::Nothing)));
}

TEST_CASE("caching allocator: an event wait before reuse is clean", "[allocator]") {
  CHECK(analyze_run(caching_allocator(BeforeReuse::EventWait)).findings.empty());
}

TEST_CASE("caching allocator: a successful event query before reuse is clean", "[allocator]") {
  CHECK(analyze_run(caching_allocator(BeforeReuse::QuerySuccess)).findings.empty());
}

TEST_CASE("caching allocator: an event query that is not ready does not order the reuse", "[allocator]") {
  require_reuse_race(analyze_run(caching_allocator(BeforeReuse::QueryNotReady)));
}
