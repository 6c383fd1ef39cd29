// Rules: synchronous cudaMemcpy (by direction and host memory kind), cudaMemset, cudaFree,
// cudaFreeAsync / cudaMallocAsync.
#include <catch2/catch.hpp>

#include "two_streams.h"

using namespace streamhaz::testing;

TEST_CASE("cudaMemcpy device-to-host: the host waits for the copy", "[rules][memcpy-sync]") {
  TwoStreams t;
  uint64_t host = t.r.host_alloc(4096, /*pinned=*/true);
  t.r.memcpy_sync(host, t.buf, 4096, MemcpyKind::DeviceToHost);
  t.produce(t.b);  // overwrites the copy's source afterwards
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaMemcpy device-to-device: the host does not wait", "[rules][memcpy-sync]") {
  TwoStreams t;
  uint64_t other = t.r.alloc(4096, "other");
  t.r.memcpy_sync(other, t.buf, 4096, MemcpyKind::DeviceToDevice);
  t.produce(t.b);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.title == "write-after-read race on buf");
  CHECK(f.first.name == "cudaMemcpy");
  CHECK(f.first.kind == "memcpy DtoD");
  CHECK(f.first.stream_name == "default stream");
  CHECK(f.second.name == "producer");
  CHECK(f.tier == FootprintTier::Annotation);
}

TEST_CASE("cudaMemcpy from pinned host memory: the host waits for the copy", "[rules][memcpy-sync]") {
  TwoStreams t;
  uint64_t pinned = t.r.host_alloc(4096, true);
  t.r.memcpy_sync(t.buf, pinned, 4096, MemcpyKind::HostToDevice);
  t.consume(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaMemcpy from pageable host memory may return before the copy lands", "[rules][memcpy-sync]") {
  TwoStreams t;
  uint64_t pageable = t.r.host_alloc(4096, false);
  t.r.memcpy_sync(t.buf, pageable, 4096, MemcpyKind::HostToDevice, /*pageable=*/true);
  t.consume(t.b);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.kind == "memcpy HtoD");
  CHECK(res.findings[0].first.role == AccessMode::Write);
  CHECK(res.findings[0].second.name == "consumer");
}

TEST_CASE("cudaMemcpy from pageable host memory drains the legacy stream before it starts",
          "[rules][memcpy-sync]") {
  TwoStreams t;
  StreamId blocking = t.r.stream("blocking stream", false);
  uint64_t other = t.r.alloc(4096, "other");
  uint64_t pageable = t.r.host_alloc(4096, false);
  t.produce(blocking);
  t.r.memcpy_sync(other, pageable, 4096, MemcpyKind::HostToDevice, true);
  t.consume(t.b);  // ordered after the producer through the host
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("a device-to-device cudaMemcpy does not drain the legacy stream for the host",
          "[rules][memcpy-sync]") {
  TwoStreams t;
  StreamId blocking = t.r.stream("blocking stream", false);
  uint64_t other = t.r.alloc(4096, "other");
  uint64_t other2 = t.r.alloc(4096, "other2");
  t.produce(blocking);
  t.r.memcpy_sync(other, other2, 4096, MemcpyKind::DeviceToDevice);
  t.consume(t.b);
  require_producer_consumer_race(t.analyze());
}

TEST_CASE("cudaMemset is a legacy-stream operation: ordered with blocking streams", "[rules][memset-sync]") {
  TwoStreams t;
  StreamId blocking = t.r.stream("blocking stream", false);
  t.r.memset_sync(t.buf, 4096);
  t.consume(blocking);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaMemset does not block the host", "[rules][memset-sync]") {
  TwoStreams t;
  t.r.memset_sync(t.buf, 4096);
  t.consume(t.b);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].first.name == "cudaMemset");
  CHECK(res.findings[0].first.kind == "memset");
  CHECK(res.findings[0].tier == FootprintTier::Annotation);  // the consumer's tier
}

TEST_CASE("cudaFree waits for the device: reused memory starts clean", "[rules][free]") {
  TwoStreams t;
  t.consume(t.a);
  t.r.free(t.buf);
  t.r.alloc_at(t.buf, 4096, "buf");
  t.produce(t.b);
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("without cudaFree, reusing the bytes on another stream races", "[rules][free]") {
  TwoStreams t;
  t.consume(t.a);
  t.produce(t.b);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].title == "write-after-read race on buf");
}

TEST_CASE("cudaFreeAsync then cudaMallocAsync: the pool orders the reuse", "[rules][free-async]") {
  TwoStreams t;
  uint64_t p = t.r.alloc(4096, "pool block", AllocKind::Async, t.a);
  t.r.kernel(t.a, "reader", {reads(p, 4096)});
  t.r.free(p, AllocKind::Async, t.a);
  t.r.alloc_at(p, 4096, "pool block", AllocKind::Async, t.b);
  t.r.kernel(t.b, "writer", {writes(p, 4096)});
  CHECK(t.analyze().findings.empty());
}

TEST_CASE("cudaFreeAsync on a stream that did not wait for the last use races", "[rules][free-async]") {
  TwoStreams t;
  uint64_t p = t.r.alloc(4096, "pool block", AllocKind::Async, t.a);
  t.r.kernel(t.a, "writer", {writes(p, 4096)});
  t.r.free(p, AllocKind::Async, t.b);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].title == "write-after-write race on pool block");
  CHECK(res.findings[0].first.name == "writer");
  CHECK(res.findings[0].second.name == "cudaFreeAsync");
  CHECK(res.findings[0].second.stream_name == "stream B");
}

TEST_CASE("2D copies touch only their rows", "[rules][footprint]") {
  TwoStreams t;
  uint64_t img = t.r.alloc(64 * 16, "image");
  uint64_t src = t.r.alloc(64 * 16, "src");
  Memcpy m;
  m.op = OpCommon{100, t.a, 0};
  m.dst = img;
  m.src = src;
  m.width = 32;  // left half of each 64-byte row
  m.rows = 16;
  m.dst_pitch = 64;
  m.src_pitch = 64;
  t.r.add(m);
  t.r.kernel(t.b, "right half", {writes(img + 32, 32)});  // row 0, right half: disjoint
  t.r.kernel(t.b, "row 3", {writes(img + 3 * 64 + 8, 8)});  // inside row 3's copied part
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].second.name == "row 3");
  CHECK(res.findings[0].buffer.offset == 3 * 64 + 8);
  CHECK(res.findings[0].buffer.bytes == 8);
  CHECK(res.findings[0].exact);
}

TEST_CASE("a copy with an approximated side is reported as approximate", "[rules][footprint]") {
  // The source is pitched with more rows than are tracked exactly (bounding range, not
  // exact); the destination is packed (exact). A race on the source must not claim exact
  // byte ranges because the destination, checked last, was exact.
  TwoStreams t;
  const uint64_t rows = 65;  // one more than analysis::kMaxExactRows
  uint64_t src = t.r.alloc(64 * rows, "pitched src");
  uint64_t dst = t.r.alloc(32 * rows, "packed dst");
  t.r.kernel(t.b, "src writer", {writes(src, 64 * rows)});
  Memcpy m;
  m.op = OpCommon{100, t.a, 0};
  m.dst = dst;
  m.src = src;
  m.width = 32;
  m.rows = rows;
  m.dst_pitch = 32;
  m.src_pitch = 64;
  t.r.add(m);
  auto res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].buffer.name == "pitched src");
  CHECK_FALSE(res.findings[0].exact);
}

TEST_CASE("a free done by the host is named as the host, not as stream 0", "[rules][free]") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId s = r.stream("copy");
  const uint64_t pinned = r.alloc(4096, "pinned", AllocKind::HostPinned);
  r.memset(s, pinned, 64);
  r.free(pinned, AllocKind::HostPinned);  // cudaFreeHost does not wait for the stream
  const auto found = findings_on(analyze_run(run), "pinned");
  REQUIRE(found.size() == 1);
  CHECK(found[0]->second.on_host);
  CHECK_FALSE(found[0]->first.on_host);
}
