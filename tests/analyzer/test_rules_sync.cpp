// Rules: cudaStreamSynchronize, cudaStreamQuery == cudaSuccess, cudaDeviceSynchronize, host
// functions, and the host timeline (shared by threads, or per thread in strict mode).
#include <catch2/catch.hpp>

#include "two_streams.h"

using namespace streamhaz::testing;

TEST_CASE("cudaStreamSynchronize: the host joins the stream", "[rules][stream-sync]") {
  TwoStreams t;
  t.produce(t.a);
  t.r.stream_sync(t.a);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaStreamSynchronize of the wrong stream orders nothing", "[rules][stream-sync]") {
  TwoStreams t;
  t.produce(t.a);
  t.r.stream_sync(t.b);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("cudaStreamQuery == cudaSuccess: the host joins the stream", "[rules][stream-query]") {
  TwoStreams t;
  t.produce(t.a);
  t.r.stream_query(t.a, true);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaStreamQuery == cudaErrorNotReady orders nothing", "[rules][stream-query]") {
  TwoStreams t;
  t.produce(t.a);
  t.r.stream_query(t.a, false);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("cudaDeviceSynchronize: the host joins every stream of the device", "[rules][device-sync]") {
  TwoStreams t;
  t.produce(t.a);
  t.r.device_sync();
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("work issued before cudaDeviceSynchronize on both sides still races", "[rules][device-sync]") {
  TwoStreams t;
  t.produce(t.a);
  t.consume(t.b);
  t.r.device_sync();
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("host function: an operation on its stream, ordered like any other", "[rules][host-func]") {
  TwoStreams t;
  EventId e = t.r.event();
  t.produce(t.a);
  t.r.host_func(t.a);
  t.r.record(e, t.a);
  t.r.wait(t.b, e);
  t.consume(t.b);
  auto res = t.analyze();
  CHECK(res.findings.empty());
  CHECK(res.operations_checked == 3);
}

TEST_CASE("host function gives no cross-stream ordering by itself", "[rules][host-func]") {
  TwoStreams t;
  t.produce(t.a);
  t.r.host_func(t.a);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("host threads share one timeline by default, not in strict mode", "[rules][host-threads]") {
  TwoStreams t;
  t.r.host_thread(1);
  t.produce(t.a);
  t.r.stream_sync(t.a);  // thread 1 synchronises...
  t.r.host_thread(2);
  t.consume(t.b);        // ...thread 2 issues later
  CHECK(t.analyze().findings.empty());
  AnalysisOptions strict;
  strict.per_thread_host = true;
  require_producer_consumer_race(t.analyze(strict));
}
