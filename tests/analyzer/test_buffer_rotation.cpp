// The `ipg-buffers N` what-if on synthetic IPG buckets whose step times are worked out by hand
// (TraceBuilder: an operation starts once its stream is free, its events have fired and the
// host issued it; the host issues everything long before the GPU gets to it here).
#include <catch2/catch.hpp>

#include "scenario.h"
#include "streamhaz/analysis/replay.h"

namespace streamhaz::testing {
namespace {

using analysis::Replayer;
using analysis::WhatIf;

enum class Sync { Event, Serialize };

// Four IPG flushes over two buffers: backward 100 µs and copy-in 10 µs on the compute stream,
// all-reduce 250 µs on the reduction stream (slower than compute), then a 600 µs optimizer on
// the compute stream that needs no reduction. Event: one event per buffer, recorded after its
// all-reduce, waited on before its next copy-in. Serialize: at each flush, before its
// all-reduce is issued, the compute stream waits for the whole reduction stream (DeepSpeed's
// fix), so the next copy is ordered after the previous flush only.
TraceBuilder ipg_run(Sync sync, bool names) {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute stream"), r = r0.stream("reduction stream");
  std::vector<uint64_t> ipg;
  for (int i = 0; i < 2; ++i) ipg.push_back(r0.alloc(4096, names ? "ipg_buffer[" + std::to_string(i) + "]" : ""));
  const uint64_t grads = r0.alloc(4096, names ? "grads" : "");
  const EventId ready = r0.event(), done = r0.event();
  const std::vector<EventId> free_ev = {r0.event(), r0.event()};
  for (int k = 0; k < 4; ++k) {
    const size_t b = static_cast<size_t>(k % 2);
    r0.kernel(c, "backward", {writes(grads, 4096)}, 100);
    if (sync == Sync::Event && k >= 2) r0.wait(c, free_ev[b]);
    r0.memcpy(c, ipg[b], grads, 4096, MemcpyKind::DeviceToDevice, 10);
    r0.record(ready, c);
    r0.wait(r, ready);
    if (sync == Sync::Serialize) {  // at the flush, before its all-reduce is issued
      r0.record(done, r);
      r0.wait(c, done);
    }
    r0.all_reduce(r, ipg[b], ipg[b], 1024, TraceBuilder::comm(), 250);
    if (sync == Sync::Event) r0.record(free_ev[b], r);
  }
  r0.kernel(c, "optimizer", {writes(r0.alloc(4096, names ? "params" : ""), 4096)}, 600);
  return run;
}

struct Rotated {
  int64_t step_ns = 0;
  uint64_t races = 0;
  std::vector<analysis::RankRecords> records;
  WhatIf edits;
};

Rotated rotate(const std::vector<analysis::RankRecords>& run, const std::string& spec) {
  WhatIf w;
  analysis::parse_what_if(spec, w);
  REQUIRE(w.rotation);
  Rotated out;
  out.records = analysis::apply_edits(analysis::rotate_buffers(run, *w.rotation, out.edits), out.edits);
  out.step_ns = Replayer(run).run(out.records).step_ns;
  for (const auto& f : analysis::analyze_records(out.records).findings) out.races += f.occurrences;
  return out;
}

constexpr int64_t us = 1000;

}  // namespace

TEST_CASE("ipg-buffers: a third buffer lets the compute stream run ahead of a slow reduction", "[replay][rotation]") {
  const auto records = load(ipg_run(Sync::Event, true));
  REQUIRE(Replayer(records).run_unchanged().step_ns == 1220 * us);
  // 2 buffers (as traced), times from the first backward: all-reduces 110..360, 360..610,
  // 610..860, 860..1110; copy 2 waits for all-reduce 0 (360..370), copy 3 for all-reduce 1
  // (610..620), so the optimizer runs 620..1220.
  CHECK(rotate(records, "ipg-buffers 2").step_ns == 1220 * us);
  // 3 buffers: copy 2 goes to the new buffer without waiting (320..330), copy 3 to buffer 0
  // after all-reduce 0 (430..440); the optimizer runs 440..1040, the last all-reduce ends at 1110.
  const Rotated three = rotate(records, "ipg-buffers 3");
  CHECK(three.step_ns == 1110 * us);
  CHECK(three.races == 0);
  CHECK(three.edits.drop.size() == 2);  // the run's two reuse waits...
  CHECK(three.edits.add.size() == 1);   // ...become one: use 3 after use 0
  // 1 buffer: every copy waits for the previous all-reduce: they end at 360, 620, 880, 1140;
  // copy 3 runs 880..890, the optimizer 890..1490.
  const Rotated one = rotate(records, "ipg-buffers 1 name=ipg_buffer*");
  CHECK(one.step_ns == 1490 * us);
  CHECK(one.races == 0);
}

TEST_CASE("ipg-buffers: new buffers are allocated and named after the old ones, uses move to them",
          "[replay][rotation]") {
  const auto records = load(ipg_run(Sync::Event, true));
  const Rotated three = rotate(records, "ipg-buffers 3");
  std::map<StringId, std::string> strings;
  std::string added_name;
  uint64_t added_base = 0;
  for (const Record& r : three.records[0].records) {
    if (const auto* s = std::get_if<StringDef>(&r)) strings[s->id] = s->text;
    if (const auto* b = std::get_if<BufferName>(&r); b && strings[b->name] == "ipg_buffer[2]") {
      added_name = strings[b->name];
      added_base = b->ptr;
    }
  }
  REQUIRE(added_name == "ipg_buffer[2]");
  std::vector<uint64_t> reduced;  // the all-reduces' buffers, in order
  for (const Record& r : three.records[0].records)
    if (const auto* n = std::get_if<Nccl>(&r)) reduced.push_back(n->recvbuf);
  REQUIRE(reduced.size() == 4);
  CHECK(reduced[2] == added_base);  // use 2 in the new buffer
  CHECK(reduced[3] == reduced[0]);  // use 3 back in buffer 0
  CHECK(reduced[1] != reduced[0]);
}

TEST_CASE("ipg-buffers: found from the allocations alone on an unannotated run", "[replay][rotation]") {
  const auto records = load(ipg_run(Sync::Event, false));
  const Rotated three = rotate(records, "ipg-buffers 3");
  CHECK(three.step_ns == 1110 * us);
  CHECK(three.races == 0);
  // name= picks named buffers only: there are none.
  WhatIf w;
  analysis::parse_what_if("ipg-buffers 3 name=ipg_buffer*", w);
  WhatIf edits;
  CHECK_THROWS_AS(analysis::rotate_buffers(records, *w.rotation, edits), analysis::WhatIfError);
}

TEST_CASE("ipg-buffers: a whole-stream wait is kept as it is; one buffer under it races", "[replay][rotation]") {
  const auto records = load(ipg_run(Sync::Serialize, true));
  const int64_t traced = Replayer(records).run_unchanged().step_ns;
  const Rotated three = rotate(records, "ipg-buffers 3");
  CHECK(three.edits.drop.empty());
  CHECK(three.edits.add.empty());
  CHECK(three.step_ns == traced);  // the serialising waits still hold the compute stream
  CHECK(three.races == 0);
  // One buffer: copy k+1 is ordered after all-reduce k-1 only, not after all-reduce k (DeepSpeed #6993).
  CHECK(rotate(records, "ipg-buffers 1 name=ipg_buffer*").races > 0);
}

TEST_CASE("ipg-buffers: specs and runs without a rotation are refused", "[replay][rotation]") {
  WhatIf w;
  CHECK_THROWS_AS(analysis::parse_what_if("ipg-buffers", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("ipg-buffers 0", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("ipg-buffers two", w), analysis::WhatIfError);
  CHECK_THROWS_AS(analysis::parse_what_if("ipg-buffers 3 stream=x", w), analysis::WhatIfError);
  analysis::parse_what_if("ipg-buffers 3 name=\"ipg_buffer*\"", w);
  REQUIRE(w.rotation);
  CHECK(w.rotation->buffers == 3);
  CHECK(w.rotation->name == "ipg_buffer*");
  CHECK(analysis::format_what_if(w) == "ipg-buffers 3 name=ipg_buffer*\n");
  // One stream only: nothing is drained elsewhere.
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId s = r0.stream("s");
  const uint64_t a = r0.alloc(4096), b = r0.alloc(4096);
  r0.memcpy(s, a, b, 4096);
  r0.memcpy(s, b, a, 4096);
  WhatIf edits;
  CHECK_THROWS_AS(analysis::rotate_buffers(load(run), *w.rotation, edits), analysis::WhatIfError);
}

}  // namespace streamhaz::testing
