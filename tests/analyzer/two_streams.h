// The smallest scenario: one rank, two non-blocking streams, one named buffer; a producer
// kernel writes it on A, a consumer kernel reads it on B.
#pragma once

#include "scenario.h"

namespace streamhaz::testing {

struct TwoStreams {
  TraceBuilder run{1};
  RankTraceBuilder& r = run.rank(0);
  StreamId a = r.stream("stream A");
  StreamId b = r.stream("stream B");
  uint64_t buf = r.alloc(4096, "buf");

  uint64_t produce(StreamId s) { return r.kernel(s, "producer", {writes(buf, 4096)}); }
  uint64_t consume(StreamId s) { return r.kernel(s, "consumer", {reads(buf, 4096)}); }
  AnalysisResult analyze(const AnalysisOptions& o = {}) { return analyze_run(run, o); }
};

// Exactly one race, between the producer and the consumer, read-after-write on buf.
inline void require_producer_consumer_race(const AnalysisResult& res, const std::string& second_stream = "stream B") {
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.buffer.name == "buf");
  CHECK(f.first.name == "producer");
  CHECK(f.first.role == AccessMode::Write);
  CHECK(f.second.name == "consumer");
  CHECK(f.second.role == AccessMode::Read);
  CHECK(f.second.stream_name == second_stream);
}

}  // namespace streamhaz::testing
