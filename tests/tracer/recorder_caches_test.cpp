// The recorder's per-call caches (last stream, last event, function names, the reused Kernel
// record) and its flat correlation table must never change what is recorded.
#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <random>
#include <thread>

#include "record_log.h"
#include "streamhaz/tracer/flat_map.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

TEST_CASE("FlatMap64 agrees with std::map under random inserts and erases") {
  FlatMap64<uint64_t> flat;
  std::map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Few distinct keys so runs collide, erase and refill; sometimes pointer-like keys.
    uint64_t key = 1 + rng() % 3000;
    if (i % 7 == 0) key = 0x7f0000000000ull + (key << 8);
    switch (rng() % 3) {
      case 0: {
        auto [v, fresh] = flat.try_emplace(key, i);
        auto [it, ref_fresh] = ref.try_emplace(key, i);
        REQUIRE(fresh == ref_fresh);
        REQUIRE(*v == it->second);
        break;
      }
      case 1:
        REQUIRE(flat.erase(key) == (ref.erase(key) == 1));
        break;
      default: {
        const uint64_t* v = flat.find(key);
        auto it = ref.find(key);
        REQUIRE((v != nullptr) == (it != ref.end()));
        if (v) REQUIRE(*v == it->second);
      }
    }
    REQUIRE(flat.size() == ref.size());
  }
  for (auto& [k, v] : ref) REQUIRE(*flat.find(k) == v);
  flat.clear();
  CHECK(flat.empty());
  CHECK(flat.find(ref.begin()->first) == nullptr);
  flat.insert_or_assign(5, 1);
  flat.insert_or_assign(5, 2);
  CHECK(*flat.find(5) == 2);
  CHECK(flat.find(0) == nullptr);
}

TEST_CASE("FlatMap64::erase_if erases exactly the matching entries, runs intact") {
  FlatMap64<uint64_t> flat;
  std::map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(11);
  for (uint64_t i = 0; i < 5000; ++i) {
    uint64_t key = 1 + rng() % 4000;
    flat.insert_or_assign(key, i);
    ref[key] = i;
  }
  CHECK(flat.erase_if([](uint64_t, uint64_t v) { return v % 3 == 0; }) ==
        static_cast<size_t>(std::count_if(ref.begin(), ref.end(), [](auto& kv) { return kv.second % 3 == 0; })));
  std::erase_if(ref, [](auto& kv) { return kv.second % 3 == 0; });
  REQUIRE(flat.size() == ref.size());
  for (auto& [k, v] : ref) REQUIRE(*flat.find(k) == v);
  for (uint64_t key = 1; key <= 4000; ++key) CHECK((flat.find(key) != nullptr) == ref.contains(key));
}

TEST_CASE("a launch on a stream handle destroyed and created again goes to the new stream") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0x7000, 0, 0, 0);
  rec.kernel_launched(StreamRef{0x7000, 0}, 1, testing::launch(1, "k"));
  rec.stream_destroyed(0x7000);
  rec.stream_created(0x7000, 0, kStreamNonBlocking, 0);
  rec.kernel_launched(StreamRef{0x7000, 0}, 2, testing::launch(1, "k"));
  // Recreated without a destroy seen: still a new stream.
  rec.stream_created(0x7000, 0, 0, 0);
  rec.event_recorded(0xe1, StreamRef{0x7000, 0});
  auto kernels = log.all<Kernel>();
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0].op.stream == 1);
  CHECK(kernels[1].op.stream == 2);
  CHECK(log.all<EventRecord>()[0].stream == 3);
}

TEST_CASE("a destroyed stream used again without a create is asked about again") {
  RecordLog log;
  int queries = 0;
  Recorder rec(log, [&](uint64_t) -> std::optional<StreamInfo> {
    ++queries;
    return StreamInfo{0, 0, 0};
  });
  rec.kernel_launched(StreamRef{0x9000, 0}, 1, testing::launch(1, "k"));
  rec.kernel_launched(StreamRef{0x9000, 0}, 2, testing::launch(1, "k"));
  CHECK(queries == 1);
  rec.stream_destroyed(0x9000);
  rec.kernel_launched(StreamRef{0x9000, 0}, 3, testing::launch(1, "k"));
  CHECK(queries == 2);
  auto kernels = log.all<Kernel>();
  CHECK(kernels[0].op.stream == kernels[1].op.stream);
  CHECK(kernels[2].op.stream != kernels[1].op.stream);
}

TEST_CASE("the last-stream cache tells devices, per-thread calls and threads apart") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 1, testing::launch(1, "k"));
  rec.kernel_launched(StreamRef{0, 1}, 2, testing::launch(1, "k"));
  rec.kernel_launched(StreamRef{0, 1, true}, 3, testing::launch(1, "k"));
  rec.kernel_launched(StreamRef{0, 1, true}, 4, testing::launch(1, "k"));
  std::thread other([&] { rec.kernel_launched(StreamRef{0, 1, true}, 5, testing::launch(1, "k")); });
  other.join();
  rec.kernel_launched(StreamRef{0, 1, true}, 6, testing::launch(1, "k"));
  rec.kernel_launched(StreamRef{0, 0}, 7, testing::launch(1, "k"));
  auto k = log.all<Kernel>();
  REQUIRE(k.size() == 7);
  CHECK(k[0].op.stream == 1);
  CHECK(k[1].op.stream == 2);
  CHECK(k[2].op.stream == 3);
  CHECK(k[3].op.stream == 3);
  CHECK(k[4].op.stream == 4);  // the other thread's own per-thread stream
  CHECK(k[5].op.stream == 3);
  CHECK(k[6].op.stream == 1);
  CHECK(log.count<StreamCreate>() == 4);
}

TEST_CASE("an event handle destroyed or created again is a new event for records") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, 0, 0);
  rec.event_created(0xe1, 0);
  rec.event_recorded(0xe1, StreamRef{0xa, 0});
  rec.event_recorded(0xe1, StreamRef{0xa, 0});
  rec.event_destroyed(0xe1);
  rec.event_recorded(0xe1, StreamRef{0xa, 0});  // never seen created: a fresh id
  rec.event_created(0xe1, 0);                   // created again over a live mapping
  rec.event_waited(StreamRef{0xa, 0}, 0xe1);
  auto records = log.all<EventRecord>();
  REQUIRE(records.size() == 3);
  CHECK(records[0].event == 1);
  CHECK(records[1].event == 1);
  CHECK(records[2].event == 2);
  CHECK(log.all<EventWait>()[0].event == 3);
  CHECK(log.count<EventCreate>() == 3);
}

TEST_CASE("the reused kernel record carries each launch's own fields and parameter bytes") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::PointersAndBytes);  // the tiers that keep the bytes
  KernelLaunch a = testing::launch(0x10, "_Z1aPf");
  const std::string long_params(40, 'x');
  a.params = long_params;
  a.grid[0] = 7;
  KernelLaunch b = testing::launch(0x20, "_Z1bv");
  b.block[1] = 3;
  rec.kernel_launched(StreamRef{0, 0}, 1, a);
  rec.kernel_launched(StreamRef{0, 0}, 2, b);
  const std::string short_params("ab", 2);
  a.params = short_params;
  rec.kernel_launched(StreamRef{0, 0}, 3, a);
  auto k = log.all<Kernel>();
  REQUIRE(k.size() == 3);
  CHECK(k[0].params == long_params);
  CHECK(k[0].grid[0] == 7);
  CHECK(k[1].params.empty());
  CHECK(k[1].grid[0] == 1);
  CHECK(k[1].block[1] == 3);
  CHECK(k[2].params == "ab");
  CHECK(k[0].name == k[2].name);
  CHECK(k[0].name != k[1].name);
  CHECK(log.count<StringDef>() == 2);
}

TEST_CASE("a kernel name given as a C string is read only for a function not seen yet") {
  RecordLog log;
  Recorder rec(log);
  KernelLaunch k;
  k.function = 0x30;
  k.name = "_Z6kernelv";
  rec.kernel_launched(StreamRef{0, 0}, 1, k);
  k.name = static_cast<const char*>(nullptr);  // not read: the function is known
  rec.kernel_launched(StreamRef{0, 0}, 2, k);
  k.function = 0;  // no handle: named each time, interned once
  k.name = "_Z6kernelv";
  rec.kernel_launched(StreamRef{0, 0}, 3, k);
  auto defs = log.all<StringDef>();
  REQUIRE(defs.size() == 1);
  CHECK(defs[0].text == "_Z6kernelv");
  for (const Kernel& kr : log.all<Kernel>()) CHECK(kr.name == defs[0].id);
}

TEST_CASE("many correlations waiting at once are all joined") {
  RecordLog log;
  Recorder rec(log);
  for (uint64_t c = 1; c <= 5000; ++c) rec.kernel_launched(StreamRef{0, 0}, c * 3, testing::launch(1, "k"));
  CHECK(rec.pending_correlations() == 5000);
  for (uint64_t c = 5000; c >= 1; --c) rec.activity(c * 3, c, c + 1);
  CHECK(rec.pending_correlations() == 0);
  auto kernels = log.all<Kernel>();
  auto timings = log.all<Timing>();
  REQUIRE(timings.size() == 5000);
  for (size_t i = 0; i < timings.size(); ++i) CHECK(timings[i].op_seq == kernels[4999 - i].op.seq);
}
