#include <catch2/catch.hpp>

#include "record_log.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

TEST_CASE("activity joins the operation by correlation id") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 41, testing::launch(1, "k"));
  Memcpy m;
  m.dst = 0x10;
  m.src = 0x20;
  m.width = 64;
  rec.memcpy_issued(StreamRef{0, 0}, 42, m);
  rec.memset_issued(StreamRef{0, 0}, 43, Memset{});
  CHECK(rec.pending_correlations() == 3);
  rec.activity(42, 1000, 1500);
  rec.activity(41, 900, 950);
  rec.activity(43, 2000, 2100);
  auto timings = log.all<Timing>();
  REQUIRE(timings.size() == 3);
  CHECK(timings[0].op_seq == log.all<Memcpy>()[0].op.seq);
  CHECK(timings[0].start_ns == 1000);
  CHECK(timings[0].end_ns == 1500);
  CHECK(timings[1].op_seq == log.all<Kernel>()[0].op.seq);
  CHECK(timings[2].op_seq == log.all<Memset>()[0].op.seq);
  CHECK(rec.pending_correlations() == 0);
}

TEST_CASE("activity for an unknown or already joined correlation is dropped") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 7, testing::launch(1, "k"));
  rec.activity(99, 1, 2);
  rec.activity(7, 1, 2);
  rec.activity(7, 3, 4);
  CHECK(log.count<Timing>() == 1);
}

TEST_CASE("operations with no correlation expect no activity") {
  RecordLog log;
  Recorder rec(log);
  rec.memset_issued(StreamRef{0, 0}, 0, Memset{});
  CHECK(rec.pending_correlations() == 0);
}

TEST_CASE("memcpy fields pass through and gain seq and stream") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, 0, 0);
  Memcpy m;
  m.dst = 0x1000;
  m.src = 0x2000;
  m.width = 128;
  m.rows = 4;
  m.dst_pitch = 256;
  m.src_pitch = 512;
  m.kind = MemcpyKind::HostToDevice;
  m.flags = kMemSync | kMemPageableHost;
  rec.memcpy_issued(StreamRef{0xa, 0}, 0, m);
  auto out = log.all<Memcpy>()[0];
  CHECK(out.op.stream == 1);
  CHECK(out.op.seq > 0);
  CHECK(out.width == 128);
  CHECK(out.rows == 4);
  CHECK(out.dst_pitch == 256);
  CHECK(out.kind == MemcpyKind::HostToDevice);
  CHECK(out.flags == (kMemSync | kMemPageableHost));
}

TEST_CASE("operations issued while GPU times are off wait for no activity") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 1, testing::launch(1, "timed"));
  rec.set_timings_expected(false);
  rec.kernel_launched(StreamRef{0, 0}, 2, testing::launch(1, "untimed"));
  rec.memset_issued(StreamRef{0, 0}, 3, Memset{});
  CHECK(rec.pending_correlations() == 1);
  rec.set_timings_expected(true);
  rec.kernel_launched(StreamRef{0, 0}, 4, testing::launch(1, "timed again"));
  // Activity of an operation issued in an earlier window still arrives after the window closed.
  rec.set_timings_expected(false);
  rec.activity(1, 10, 20);
  rec.activity(2, 30, 40);
  rec.activity(4, 50, 60);
  auto timings = log.all<Timing>();
  REQUIRE(timings.size() == 2);
  auto kernels = log.all<Kernel>();
  CHECK(timings[0].op_seq == kernels[0].op.seq);
  CHECK(timings[1].op_seq == kernels[2].op.seq);
  CHECK(rec.pending_correlations() == 0);
}

TEST_CASE("a graph launched while GPU times are off keeps nothing waiting") {
  RecordLog log;
  Recorder rec(log);
  rec.set_timings_expected(false);
  for (uint64_t c = 1; c <= 100; ++c) rec.graph_launched(StreamRef{0, 0}, c, 0x7777);
  CHECK(rec.pending_correlations() == 0);
  rec.set_timings_expected(true);
  rec.graph_launched(StreamRef{0, 0}, 101, 0x7777);
  CHECK(rec.pending_correlations() == 1);
  rec.activity(101, 5, 6);
  rec.activity(101, 7, 8);  // a second node of the same launch
  CHECK(log.count<Timing>() == 2);
}

TEST_CASE("operations left waiting when a window closed are forgotten, later ones still timed") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 1, testing::launch(1, "never timed"));  // issued as the window switched
  rec.graph_launched(StreamRef{0, 0}, 2, 0x7777);
  const uint64_t closed_through = rec.last_seq();
  rec.kernel_launched(StreamRef{0, 0}, 3, testing::launch(1, "next window"));
  rec.graph_launched(StreamRef{0, 0}, 4, 0x7777);
  CHECK(rec.pending_correlations() == 4);
  rec.forget_timings_through(closed_through);
  CHECK(rec.pending_correlations() == 2);
  rec.activity(1, 10, 20);
  rec.activity(2, 10, 20);
  rec.activity(3, 30, 40);
  rec.activity(4, 50, 60);
  auto timings = log.all<Timing>();
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].op_seq == log.all<Kernel>()[1].op.seq);
  CHECK(timings[1].op_seq == log.all<GraphLaunch>()[1].op.seq);
}

TEST_CASE("a recorder that stopped observing says from which call and records nothing more") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  const uint64_t last = rec.last_seq();
  CHECK(rec.stop_observing("another CUPTI client subscribed") == last + 1);
  const size_t before = log.records.size();
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  rec.event_recorded(5, StreamRef{0, 0});
  rec.nvtx_push("step");
  CHECK(log.records.size() == before);
  const auto metas = log.all<Meta>();
  REQUIRE(metas.size() == 1);
  CHECK_THAT(metas[0].json, Catch::Contains("\"unobserved\"") && Catch::Contains("\"from_seq\":" + std::to_string(last + 1)));
  CHECK(rec.stop_observing("again") == rec.last_seq() + 1);  // a second stop writes nothing
  CHECK(log.all<Meta>().size() == 1);
}
