// Rules: program order on a stream; cudaEventRecord / cudaStreamWaitEvent;
// cudaEventSynchronize; cudaEventQuery == cudaSuccess.
#include <catch2/catch.hpp>

#include "two_streams.h"

using namespace streamhaz::testing;

TEST_CASE("program order: two operations on one stream are ordered", "[rules][program-order]") {
  TwoStreams t;
  t.produce(t.a);
  t.consume(t.a);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("program order: the same pair on two streams races", "[rules][program-order]") {
  TwoStreams t;
  t.produce(t.a);
  t.consume(t.b);
  auto res = t.analyze();
  require_producer_consumer_race(res);
  CHECK(res.findings[0].first.stream_name == "stream A");
  CHECK(res.findings[0].title == "read-after-write race on buf");
}

TEST_CASE("event record + stream wait orders the streams", "[rules][event-wait]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.produce(t.a);
  t.r.record(e, t.a);
  t.r.wait(t.b, e);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("stream wait on an event never recorded gives no edge", "[rules][event-wait]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.produce(t.a);
  t.r.wait(t.b, e);  // before the record: a no-op in CUDA
  t.r.record(e, t.a);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("stream wait joins the record issued before it, not a later one", "[rules][event-wait]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.r.record(e, t.a);  // recorded before the write
  t.produce(t.a);
  t.r.wait(t.b, e);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("event wait is one-way: the waiting stream's work is not ordered before the other's",
          "[rules][event-wait]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.r.record(e, t.a);
  t.r.wait(t.b, e);
  t.consume(t.b);
  t.produce(t.a);  // A never waited for B
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].title == "write-after-read race on buf");
  CHECK(res.findings[0].second.stream_name == "stream A");
}

TEST_CASE("cudaEventSynchronize: the host joins the event, later work is ordered", "[rules][event-sync]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.produce(t.a);
  t.r.record(e, t.a);
  t.r.event_sync(e);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaEventSynchronize on an event recorded before the write does not order it",
          "[rules][event-sync]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.r.record(e, t.a);
  t.produce(t.a);
  t.r.event_sync(e);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("cudaEventQuery == cudaSuccess orders like a synchronize", "[rules][event-query]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.produce(t.a);
  t.r.record(e, t.a);
  t.r.event_query(e, true);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaEventQuery == cudaErrorNotReady orders nothing", "[rules][event-query]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.produce(t.a);
  t.r.record(e, t.a);
  t.r.event_query(e, false);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("huge stream/event/string ids of a corrupt trace cost no huge tables", "[rules][events][hostile]") {
  // Ids were indexes into vectors sized by the largest id seen: one record with id 2^32 - 16
  // asked for tens of gigabytes (std::bad_alloc, or the machine's memory).
  TwoStreams t;
  const uint32_t huge = 0xfffffff0u;
  t.r.add(EventCreate{huge, 0});
  t.r.add(StringDef{huge, "far name"});
  t.r.add(StreamCreate{900, huge, 0, kStreamNonBlocking, 0, 0});
  t.r.add(StreamName{huge, huge});
  t.produce(huge);
  t.r.record(huge, huge);
  t.r.wait(t.b, huge);
  t.consume(t.b);     // ordered after the producer through the event
  t.consume(t.a);     // not ordered: a race named with the far stream's name
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.stream_name == "far name");
  CHECK(res.findings[0].first.stream == huge);
}
