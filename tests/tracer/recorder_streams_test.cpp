#include <catch2/catch.hpp>
#include <thread>

#include "record_log.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

TEST_CASE("created streams get dense ids from 1 with their flags and priority") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0x7000, 0, kStreamNonBlocking, -1);
  rec.stream_created(0x8000, 1, 0, 0);
  auto creates = log.all<StreamCreate>();
  REQUIRE(creates.size() == 2);
  CHECK(creates[0].stream == 1);
  CHECK(creates[0].flags == kStreamNonBlocking);
  CHECK(creates[0].priority == -1);
  CHECK(creates[0].handle == 0x7000);
  CHECK(creates[1].stream == 2);
  CHECK(creates[1].device == 1);
}

TEST_CASE("the legacy default stream is created lazily, once per device") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 1, testing::launch(1, "k"));
  rec.kernel_launched(StreamRef{kHandleLegacyStream, 0}, 2, testing::launch(1, "k"));
  rec.kernel_launched(StreamRef{0, 1}, 3, testing::launch(1, "k"));
  auto creates = log.all<StreamCreate>();
  REQUIRE(creates.size() == 2);
  CHECK(creates[0].flags == kStreamLegacyDefault);
  CHECK(creates[0].device == 0);
  CHECK(creates[1].device == 1);
  auto kernels = log.all<Kernel>();
  CHECK(kernels[0].op.stream == kernels[1].op.stream);
  CHECK(kernels[2].op.stream != kernels[0].op.stream);
}

TEST_CASE("per-thread default streams are one per host thread") {
  RecordLog log;
  Recorder rec(log);
  rec.memset_issued(StreamRef{0, 0, /*per_thread_api=*/true}, 0, Memset{});
  rec.memset_issued(StreamRef{kHandlePerThreadStream, 0}, 0, Memset{});
  std::thread other([&] { rec.memset_issued(StreamRef{0, 0, true}, 0, Memset{}); });
  other.join();
  auto creates = log.all<StreamCreate>();
  REQUIRE(creates.size() == 2);
  CHECK(creates[0].flags == kStreamPerThreadDefault);
  CHECK(creates[1].flags == kStreamPerThreadDefault);
  auto sets = log.all<Memset>();
  CHECK(sets[0].op.stream == sets[1].op.stream);
  CHECK(sets[2].op.stream != sets[0].op.stream);
  CHECK(log.count<HostThread>() == 2);
}

TEST_CASE("a stream handle reused after destroy is a new stream") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0x7000, 0, 0, 0);
  rec.stream_destroyed(0x7000);
  rec.stream_created(0x7000, 0, 0, 0);
  auto creates = log.all<StreamCreate>();
  REQUIRE(creates.size() == 2);
  CHECK(creates[1].stream == 2);
}

TEST_CASE("a stream never seen created is described by the query") {
  RecordLog log;
  Recorder rec(log, [](uint64_t handle) -> std::optional<StreamInfo> {
    if (handle == 0x9000) return StreamInfo{3, kStreamNonBlocking, -2};
    return std::nullopt;
  });
  rec.event_recorded(0xe1, StreamRef{0x9000, 0});
  auto creates = log.all<StreamCreate>();
  REQUIRE(creates.size() == 1);
  CHECK(creates[0].device == 3);
  CHECK(creates[0].flags == kStreamNonBlocking);
  CHECK(creates[0].priority == -2);
}

TEST_CASE("events, waits, syncs and queries name the right ids") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, 0, 0);
  rec.stream_created(0xb, 0, 0, 0);
  rec.event_created(0xe1, 2);
  rec.event_recorded(0xe1, StreamRef{0xa, 0});
  rec.event_waited(StreamRef{0xb, 0}, 0xe1);
  rec.event_synchronized(0xe1);
  rec.event_queried(0xe1, true);
  rec.stream_synchronized(StreamRef{0xb, 0});
  rec.stream_queried(StreamRef{0xa, 0}, false);
  rec.device_synchronized(0);
  auto created = log.all<EventCreate>();
  REQUIRE(created.size() == 1);
  CHECK(created[0].event == 1);
  CHECK(created[0].flags == 2);
  CHECK(log.all<EventRecord>()[0].stream == 1);
  CHECK(log.all<EventWait>()[0].stream == 2);
  CHECK(log.all<EventWait>()[0].event == 1);
  CHECK(log.all<EventQuery>()[0].complete);
  CHECK(log.all<StreamSync>()[0].stream == 2);
  CHECK_FALSE(log.all<StreamQuery>()[0].complete);
  CHECK(log.count<DeviceSync>() == 1);
}

TEST_CASE("an event never seen created gets an id and an EventCreate on first use") {
  RecordLog log;
  Recorder rec(log);
  rec.event_synchronized(0xe9);
  REQUIRE(log.count<EventCreate>() == 1);
  CHECK(log.all<EventSync>()[0].event == log.all<EventCreate>()[0].event);
}

TEST_CASE("sequence numbers increase in the order records leave") {
  RecordLog log;
  Recorder rec(log);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(uint64_t(t + 1), "k"));
        rec.event_recorded(0xe0 + t, StreamRef{0, 0});
      }
    });
  }
  for (auto& th : threads) th.join();
  uint64_t last = 0;
  for (const auto& r : log.records) {
    uint64_t seq = 0;
    if (auto* op = op_common(r)) seq = op->seq;
    if (auto* e = std::get_if<EventRecord>(&r)) seq = e->seq;
    if (auto* s = std::get_if<StreamCreate>(&r)) seq = s->seq;
    if (seq == 0) continue;
    CHECK(seq > last);
    last = seq;
  }
  CHECK(rec.last_seq() == last);
}

TEST_CASE("kernel names are interned once per function") {
  RecordLog log;
  Recorder rec(log);
  KernelLaunch k = testing::launch(0x1234, "_Z6kernelPf");
  k.grid[0] = 8;
  k.block[0] = 256;
  k.shared_mem = 1024;
  rec.kernel_launched(StreamRef{0, 0}, 0, k);
  rec.kernel_launched(StreamRef{0, 0}, 0, k);
  REQUIRE(log.count<StringDef>() == 1);
  auto kernels = log.all<Kernel>();
  CHECK(kernels[0].name == log.all<StringDef>()[0].id);
  CHECK(kernels[1].name == kernels[0].name);
  CHECK(kernels[0].grid[0] == 8);
  CHECK(kernels[0].block[0] == 256);
  CHECK(kernels[0].shared_mem == 1024);
  CHECK(kernels[0].params.empty());
}

TEST_CASE("allocations, frees and names") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, 0, 0);
  rec.allocated(AllocKind::Device, 0x1000, 4096, 0);
  rec.allocated(AllocKind::Async, 0x2000, 512, 0, StreamRef{0xa, 0});
  rec.freed(AllocKind::Async, 0x2000, StreamRef{0xa, 0});
  rec.freed(AllocKind::Device, 0x1000);
  rec.buffer_named(0x1000, 4096, "ipg_buffer[0]");
  auto allocs = log.all<Alloc>();
  REQUIRE(allocs.size() == 2);
  CHECK(allocs[1].stream == 1);
  CHECK(allocs[1].kind == AllocKind::Async);
  CHECK(log.all<Free>()[1].stream == 0);
  CHECK(log.all<BufferName>()[0].bytes == 4096);
}

TEST_CASE("graph launches name the captured graph") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, 0, 0);
  rec.capture_began(StreamRef{0xa, 0});
  rec.kernel_launched(StreamRef{0xa, 0}, 5, testing::launch(1, "k"));
  rec.capture_ended(StreamRef{0xa, 0}, 0x6000);
  rec.graph_instantiated(0x7777, 0x6000);
  rec.graph_launched(StreamRef{0xa, 0}, 9, 0x7777);
  CHECK(log.all<CaptureBegin>()[0].stream == 1);
  CHECK(log.all<CaptureBegin>()[0].graph == 0);  // a plain capture: named at its end
  CHECK(log.all<CaptureEnd>()[0].graph == 1);    // the first captured graph
  CHECK(log.all<GraphLaunch>()[0].graph == 1);
  // Every node reports the launch's correlation.
  rec.activity(9, 100, 200);
  rec.activity(9, 300, 400);
  CHECK(log.count<Timing>() == 2);
}

TEST_CASE("a graph handle reused by a later capture is a new graph; executables keep theirs") {
  RecordLog log;
  Recorder rec(log);
  const StreamRef s{0xa, 0};
  rec.capture_began(s);
  rec.capture_ended(s, 0x6000);
  rec.graph_instantiated(0x7001, 0x6000);  // then the graph is destroyed (PyTorch does)...
  rec.capture_began(s);
  rec.capture_ended(s, 0x6000);            // ...and the next capture gets its handle
  rec.graph_instantiated(0x7002, 0x6000);
  rec.graph_launched(s, 0, 0x7001);
  rec.graph_launched(s, 0, 0x7002);
  rec.graph_launched(s, 0, 0x7003);  // never instantiated from a capture
  const auto launches = log.all<GraphLaunch>();
  REQUIRE(launches.size() == 3);
  CHECK(launches[0].graph == 1);
  CHECK(launches[1].graph == 2);
  CHECK(launches[2].graph == 0);
}

TEST_CASE("a capture into an existing graph names it at both ends; an invalidated one names none") {
  RecordLog log;
  Recorder rec(log);
  const StreamRef s{0xa, 0};
  rec.capture_began(s);
  rec.capture_ended(s, 0x6000);
  rec.capture_began(s, 0x6000);  // cuStreamBeginCaptureToGraph
  rec.capture_ended(s, 0x6000);
  rec.capture_began(s);
  rec.capture_ended(s, 0);  // invalidated
  const auto begins = log.all<CaptureBegin>();
  const auto ends = log.all<CaptureEnd>();
  REQUIRE(begins.size() == 3);
  REQUIRE(ends.size() == 3);
  CHECK(begins[1].graph == 1);
  CHECK(ends[1].graph == 1);
  CHECK(ends[2].graph == 0);
  CHECK(rec.open_captures() == 0);
}
