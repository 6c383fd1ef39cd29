// Rules: stream capture (captured work does not run) and graph launch (it runs then, on its
// launch stream's order).
#include <catch2/catch.hpp>

#include "two_streams.h"

using namespace streamhaz::testing;

TEST_CASE("operations issued while capturing do not run", "[rules][graph]") {
  TwoStreams t;
  GraphId g = t.r.begin_capture(t.a);
  t.produce(t.a);
  t.r.end_capture(t.a, g);
  t.consume(t.b);
  auto res = t.analyze();
  CHECK(res.findings.empty());
  CHECK(res.operations_checked == 1);
}

TEST_CASE("a graph launch runs the captured work, unordered with other streams", "[rules][graph]") {
  TwoStreams t;
  GraphId g = t.r.begin_capture(t.a);
  t.produce(t.a);
  t.r.end_capture(t.a, g);
  t.r.graph_launch(t.a, g);
  t.consume(t.b);
  auto res = t.analyze();
  require_producer_consumer_race(res);
  CHECK(res.findings[0].first.stream_name == "stream A (graph 1)");
}

TEST_CASE("an event recorded after the launch orders the graph's work", "[rules][graph]") {
  TwoStreams t;
  EventId e = t.r.event();
  GraphId g = t.r.begin_capture(t.a);
  t.produce(t.a);
  t.r.end_capture(t.a, g);
  t.r.graph_launch(t.a, g);
  t.r.record(e, t.a);
  t.r.wait(t.b, e);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("graph work is ordered after earlier work on its launch stream", "[rules][graph]") {
  TwoStreams t;
  GraphId g = t.r.begin_capture(t.b);
  t.consume(t.b);
  t.r.end_capture(t.b, g);
  t.produce(t.a);
  t.r.graph_launch(t.a, g);  // launched on A, after the producer
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("graph work is not ordered after work on another stream", "[rules][graph]") {
  TwoStreams t;
  GraphId g = t.r.begin_capture(t.b);
  t.consume(t.b);
  t.r.end_capture(t.b, g);
  t.produce(t.a);
  t.r.graph_launch(t.b, g);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].second.stream_name == "stream B (graph 1)");
}

namespace {
// A capture forked onto stream B by an event, joined back into A at the end. The producer
// runs on branch A; the consumer on branch B, ordered after it only when `ordered`.
TwoStreams forked_capture(bool ordered) {
  TwoStreams t;
  EventId fork = t.r.event(), produced = t.r.event(), join = t.r.event();
  GraphId g = t.r.begin_capture(t.a);
  t.r.record(fork, t.a);
  t.r.wait(t.b, fork);  // B joins the capture
  t.produce(t.a);
  t.r.record(produced, t.a);
  if (ordered) t.r.wait(t.b, produced);
  t.consume(t.b);
  t.r.record(join, t.b);
  t.r.wait(t.a, join);
  t.r.end_capture(t.a, g);
  t.r.graph_launch(t.a, g);
  return t;
}
}  // namespace

TEST_CASE("branches of one captured graph are unordered unless the capture ordered them", "[rules][graph]") {
  auto t = forked_capture(false);
  auto res = t.analyze();
  require_producer_consumer_race(res, "stream B (graph 1)");
  CHECK(res.findings[0].first.stream_name == "stream A (graph 1)");
  CHECK_FALSE(res.findings[0].detail.empty());
}

TEST_CASE("an event dependency inside the capture orders the branches at launch", "[rules][graph]") {
  auto t = forked_capture(true);
  auto res = t.analyze();
  CHECK(res.findings.empty());
  CHECK(res.operations_checked == 3);  // the launch and the two replayed kernels
}

TEST_CASE("an event re-recorded during a capture no longer orders by its earlier eager record", "[graphs]") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId a = r.stream("a"), b = r.stream("b"), c = r.stream("capture");
  const uint64_t buf = r.alloc(4096, "buf");
  const EventId e = r.event();
  r.kernel(a, "_Z6writerv", {writes(buf, 64)});
  r.record(e, a);  // covers the writer...
  const GraphId g = r.begin_capture(c);
  r.record(e, c);  // ...until recorded again, into the graph: the old record is gone
  r.end_capture(c, g);
  r.wait(b, e);
  r.kernel(b, "_Z6readerv", {reads(buf, 64)});
  REQUIRE(findings_on(analyze_run(run), "buf").size() == 1);
}

// The tracer names a plain capture's graph only at cudaStreamEndCapture (the builder writes it
// so too): work issued before the end must already count as captured.
TEST_CASE("a capture whose graph is named only at its end still holds its work back", "[rules][graph]") {
  TwoStreams t;
  const GraphId g = t.r.begin_capture(t.a);
  t.produce(t.a);
  t.consume(t.b);  // eager, while A captures: the producer has not run
  t.r.end_capture(t.a, g);
  auto res = t.analyze();
  CHECK(res.findings.empty());
  CHECK(res.operations_checked == 1);
}

TEST_CASE("eager work on other streams runs while a side stream captures", "[rules][graph]") {
  TwoStreams t;
  const StreamId c = t.r.stream("capture stream");
  const GraphId g = t.r.begin_capture(c);
  t.produce(t.a);  // not captured: A never joined the capture
  t.r.end_capture(c, g);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("launches of one graph on two streams run one after the other, each after its stream's work",
          "[rules][graph]") {
  TwoStreams t;
  const StreamId c = t.r.stream("capture stream");
  const GraphId g = t.r.begin_capture(c);
  t.consume(c);
  t.r.end_capture(c, g);
  t.r.graph_launch(t.a, g);  // reads buf on A's order
  t.produce(t.b);            // B writes buf: the first launch's read is unordered with it
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.stream_name == "capture stream (graph 1)");
  CHECK(res.findings[0].second.stream_name == "stream B");
  // Launched again on B after the write: that launch is ordered after B's work, no new pair.
  t.r.graph_launch(t.b, g);
  CHECK(t.analyze().findings.size() == 1);
}

TEST_CASE("a second launch of a graph is not ordered after work on the first launch's stream", "[rules][graph]") {
  TwoStreams t;
  const StreamId c = t.r.stream("capture stream");
  const GraphId g = t.r.begin_capture(c);
  t.consume(c);
  t.r.end_capture(c, g);
  t.r.graph_launch(t.a, g);
  t.produce(t.a);            // after the first launch on A
  t.r.graph_launch(t.b, g);  // the second launch waits for the first, not for A's producer
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.name == "producer");
  CHECK(res.findings[0].second.name == "consumer");
}

TEST_CASE("cuStreamBeginCaptureToGraph adds its work to the graph it names", "[rules][graph]") {
  TwoStreams t;
  const StreamId c = t.r.stream("capture stream");
  const GraphId g = t.r.begin_capture(c);
  t.consume(c);
  t.r.end_capture(c, g);
  t.r.begin_capture_into(c, g);  // a second capture into the same graph
  t.r.kernel(c, "second_writer", {writes(t.buf, 64)});
  t.r.end_capture(c, g);
  t.r.graph_launch(t.a, g);
  t.produce(t.b);
  auto res = t.analyze();
  // Both captured kernels run at the launch and meet B's producer.
  CHECK(res.findings.size() == 2);
  CHECK(res.operations_checked == 4);
}

TEST_CASE("a capture that ends without a graph (invalidated) gives its stream back to eager work", "[rules][graph]") {
  TwoStreams t;
  t.r.begin_capture(t.a);
  t.r.end_capture(t.a, 0);  // cudaStreamEndCapture failed: no graph
  t.produce(t.a);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}
