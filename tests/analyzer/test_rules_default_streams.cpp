// Rules: the legacy default stream against blocking and non-blocking streams; the
// per-thread default stream is a blocking stream of its own.
#include <catch2/catch.hpp>

#include "two_streams.h"

using namespace streamhaz::testing;

namespace {
struct DefaultStreams : TwoStreams {
  StreamId blocking = r.stream("blocking stream", /*non_blocking=*/false);
  StreamId legacy = r.legacy_stream();
};
}  // namespace

TEST_CASE("legacy stream waits for earlier work on blocking streams", "[rules][legacy]") {
  DefaultStreams t;
  t.produce(t.blocking);
  t.consume(t.legacy);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("legacy stream does not wait for non-blocking streams", "[rules][legacy]") {
  DefaultStreams t;
  t.produce(t.a);  // non-blocking
  t.consume(t.legacy);
  require_producer_consumer_race(t.analyze(), "default stream");
}

TEST_CASE("blocking streams wait for earlier legacy-stream work", "[rules][legacy]") {
  DefaultStreams t;
  t.produce(t.legacy);
  t.consume(t.blocking);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("non-blocking streams do not wait for legacy-stream work", "[rules][legacy]") {
  DefaultStreams t;
  t.produce(t.legacy);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("two blocking streams are not ordered with each other without legacy work between",
          "[rules][legacy]") {
  DefaultStreams t;
  StreamId other = t.r.stream("other blocking", false);
  t.produce(t.blocking);
  t.consume(other);
  require_producer_consumer_race(t.analyze(), "other blocking");
}

TEST_CASE("legacy work between two blocking streams orders them", "[rules][legacy]") {
  DefaultStreams t;
  StreamId other = t.r.stream("other blocking", false);
  t.produce(t.blocking);
  t.r.host_func(t.legacy);  // waits for `blocking`, and `other` waits for it
  t.consume(other);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("per-thread default stream synchronises with the legacy stream like a blocking stream",
          "[rules][per-thread]") {
  DefaultStreams t;
  StreamId pt = t.r.per_thread_stream();
  t.produce(pt);
  t.consume(t.legacy);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("per-thread default streams of two threads are two streams", "[rules][per-thread]") {
  DefaultStreams t;
  t.r.host_thread(1);
  StreamId pt1 = t.r.per_thread_stream();
  t.produce(pt1);
  t.r.host_thread(2);
  StreamId pt2 = t.r.per_thread_stream();
  REQUIRE(pt1 != pt2);
  t.consume(pt2);
  require_producer_consumer_race(t.analyze(), "per-thread default stream");
}

TEST_CASE("per-thread default stream is not ordered with non-blocking streams", "[rules][per-thread]") {
  DefaultStreams t;
  StreamId pt = t.r.per_thread_stream();
  t.produce(pt);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("synchronising a blocking stream does not wait for later legacy-stream work", "[rules][legacy]") {
  // Only work issued to the blocking stream after the legacy work waits for it; the host
  // waiting for the blocking stream learns nothing about the legacy work.
  DefaultStreams t;
  t.r.host_func(t.blocking);
  t.produce(t.legacy);
  t.r.stream_sync(t.blocking);
  t.consume(t.b);  // non-blocking: ordered after the legacy producer only through the host
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("a completed query of a blocking stream does not cover later legacy-stream work", "[rules][legacy]") {
  DefaultStreams t;
  t.produce(t.legacy);
  t.r.stream_query(t.blocking, true);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("an event recorded on a blocking stream after legacy work covers it", "[rules][legacy]") {
  DefaultStreams t;
  t.produce(t.legacy);
  EventId e = t.r.event();
  t.r.record(e, t.blocking);  // the record is a command on the blocking stream: it waits for the legacy work
  t.r.wait(t.b, e);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}
