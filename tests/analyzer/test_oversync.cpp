// Over-synchronisation verdicts and the minimal synchronisation on synthetic runs whose
// kernels carry annotation-tier footprints, so every conflicting pair is known.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "scenario.h"
#include "streamhaz/analysis/check.h"
#include "streamhaz/analysis/sync.h"

namespace streamhaz::testing {
namespace {

using analysis::FindingKind;
using analysis::SyncReport;
using analysis::SyncJudgement;

SyncReport sync_report(const TraceBuilder& run, std::vector<Finding>* races = nullptr) {
  const auto dir = fresh_dir();
  run.write_dir(dir.string());
  SyncReport rep = analysis::analyze_sync(expand_trace_paths({dir.string()}), {}, {}, races);
  std::filesystem::remove_all(dir);
  return rep;
}

// Where a collective sits against the stalling wait of two_waits (a run without step ranges).
enum class Collective { None, Before, After };

// The reduction stream writes X, then Y; the compute stream waits for each and then reads X,
// then reads Z (`last_footprint` false: the last kernel has no footprint at all). `collective`
// adds an all-reduce of its own buffer W on the compute stream, first or last.
TraceBuilder two_waits(bool last_footprint, Collective collective = Collective::None) {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "X"), y = r0.alloc(4096, "Y"), z = r0.alloc(4096, "Z");
  const uint64_t w = r0.alloc(4096, "W");
  if (collective == Collective::Before) r0.all_reduce(c, w, w, 1024, 7, 5);
  const EventId e1 = r0.event(), e2 = r0.event();
  r0.kernel(r, "write_x", {writes(x, 4096)}, 100);
  r0.record(e1, r);
  r0.wait(c, e1);  // needed: orders write_x before read_x
  r0.kernel(c, "read_x", {reads(x, 4096)}, 10);
  r0.kernel(r, "write_y", {writes(y, 4096)}, 100);
  r0.record(e2, r);
  r0.wait(c, e2);  // nothing on the compute stream touches Y afterwards
  if (last_footprint) r0.kernel(c, "read_z", {reads(z, 4096)}, 10);
  else r0.kernel(c, "read_z", {}, 10);
  if (collective == Collective::After) r0.all_reduce(c, w, w, 1024, 7, 5);
  return run;
}

}  // namespace

TEST_CASE("oversync: a wait that orders no conflicting pair and stalls is a finding", "[oversync]") {
  const SyncReport rep = sync_report(two_waits(true));
  REQUIRE(rep.findings.size() == 1);
  const Finding& f = rep.findings[0];
  CHECK(f.kind == FindingKind::OverSync);
  CHECK(f.title.find("protects nothing") != std::string::npos);
  CHECK(f.second.name == "read_z");
  CHECK(f.tier == FootprintTier::Annotation);
  // The compute stream idled from 118 to 208 µs; without the wait the run ends at 208 µs, 10 µs
  // earlier (read_z runs at 118..128 instead of 208..218).
  CHECK(f.detail.find("stalled 90.0 µs") != std::string::npos);
  CHECK(f.detail.find("step of 200.0 µs without it") != std::string::npos);
  // The needed wait is named as such and is no finding.
  bool protects = false;
  for (const auto& v : rep.verdicts) protects |= v.verdict == SyncJudgement::Protects;
  CHECK(protects);
}

TEST_CASE("oversync: without step ranges, stalls before the first collective are set-up, not steps", "[oversync]") {
  // The same stalling wait, once before the run's first collective (as NCCL's own
  // synchronisations in communicator init are) and once after it.
  CHECK(sync_report(two_waits(true, Collective::After)).findings.empty());
  const SyncReport after = sync_report(two_waits(true, Collective::Before));
  REQUIRE(after.findings.size() == 1);
  CHECK(after.findings[0].second.name == "read_z");
  CHECK(after.findings[0].detail.find("stalled 90.0 µs") != std::string::npos);
}

TEST_CASE("oversync: a wait that may order a kernel without footprint is not called redundant", "[oversync]") {
  const SyncReport rep = sync_report(two_waits(false));
  CHECK(rep.findings.empty());
  bool noted = false;
  for (const std::string& n : rep.notes) noted |= n.find("1 kernel(s) without footprint") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("oversync: removing a finding never makes a race (the race check reruns without it)", "[oversync]") {
  const auto records = load(two_waits(true));
  const SyncReport rep = sync_report(two_waits(true));
  REQUIRE(rep.findings.size() == 1);
  analysis::WhatIf w;
  for (const auto& v : rep.verdicts)
    if (v.finding) analysis::parse_what_if("drop rank=0 seq=" + std::to_string(rep.findings[0].second.seq - 1), w);
  const auto result = analysis::analyze_records(analysis::apply_edits(records, w));
  CHECK(result.findings.empty());
}

// The IPG bucket, serialised as DeepSpeed #5606 does: at each flush the reduction stream
// waits for the compute stream and the compute stream for the whole reduction stream.
TraceBuilder ipg_serialize(int buffers, int flushes) {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute stream"), r = r0.stream("reduction stream");
  std::vector<uint64_t> ipg;
  for (int i = 0; i < buffers; ++i) ipg.push_back(r0.alloc(4096, "ipg_buffer[" + std::to_string(i) + "]"));
  const uint64_t grads = r0.alloc(4096, "grads");
  const EventId ready = r0.event(), done = r0.event();
  for (int k = 0; k < flushes; ++k) {
    const uint64_t b = ipg[static_cast<size_t>(k % buffers)];
    r0.kernel(c, "backward", {writes(grads, 4096)}, 50);
    r0.memcpy(c, b, grads, 4096, MemcpyKind::DeviceToDevice, 5);
    r0.record(ready, c);
    r0.wait(r, ready);
    r0.record(done, r);
    r0.wait(c, done);
    r0.all_reduce(r, b, b, 1024, TraceBuilder::comm(), 100);
  }
  // Work after the last flush that needs no reduction: the serialised wait holds it up.
  r0.kernel(c, "optimizer", {writes(r0.alloc(4096, "params"), 4096)}, 250);
  return run;
}

TEST_CASE("minimal sync: one event per IPG buffer, after its last read, before its next write", "[oversync]") {
  const auto records = load(ipg_serialize(2, 4));
  std::vector<std::string> advice;
  const analysis::WhatIf w = analysis::minimal_sync(records, &advice);
  // Seqs in issue order: per flush backward, memcpy, (record, wait, record, wait), all-reduce.
  std::map<uint64_t, std::string> what;
  for (const trace::Record& r : records[0].records) {
    if (const auto* m = std::get_if<trace::Memcpy>(&r)) what[m->op.seq] = "memcpy";
    if (const auto* n = std::get_if<trace::Nccl>(&r)) what[n->op.seq] = "allreduce";
    if (const auto* k = std::get_if<trace::Kernel>(&r)) what[k->op.seq] = "kernel";
  }
  int reduction_waits = 0, reuse_waits = 0;
  for (const analysis::AddedWait& a : w.add) {
    if (what[a.after_seq] == "memcpy" && what[a.before_seq] == "allreduce") ++reduction_waits;
    if (what[a.after_seq] == "allreduce" && what[a.before_seq] == "memcpy") ++reuse_waits;
  }
  CHECK(reduction_waits == 4);          // each bucket's copy before its all-reduce
  CHECK(reuse_waits == 2);              // flushes 2 and 3 reuse buffers 0 and 1
  CHECK(w.add.size() == 6);
  bool per_buffer = false;
  for (const std::string& a : advice)
    per_buffer |= a.find("record an event on reduction stream after ncclAllReduce; make compute stream wait for it "
                         "before memcpy DtoD (2 times, rank 0; orders ipg_buffer[0], ipg_buffer[1])") == 0;
  CHECK(per_buffer);
  // The serialised run's compute-side waits are stronger than needed: the minimal one is cheaper.
  const analysis::Replayer replay(records);
  CHECK(replay.run(analysis::apply_edits(records, w)).step_ns < replay.run_unchanged().step_ns);
  // And it orders every pair the serialised run orders.
  CHECK(analysis::analyze_records(analysis::apply_edits(records, w)).findings.empty());
}

TEST_CASE("manifestation: the slowdown under which a race's operations overlap", "[oversync]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute stream"), r = r0.stream("reduction stream");
  const uint64_t b = r0.alloc(4096, "ipg_buffer[0]");
  r0.all_reduce(r, b, b, 1024, TraceBuilder::comm(), 100);  // 4..104 (host: 1, 2 streams, 3 alloc)
  r0.kernel(c, "backward", {}, 140);                          // 5..145
  r0.memcpy(c, b, b + 0, 0, MemcpyKind::DeviceToDevice, 1);   // empty: no conflict
  r0.kernel(c, "copy_in", {writes(b, 4096)}, 5);              // 145..150: races with the all-reduce
  std::vector<Finding> races = analyze_run(run).findings;
  REQUIRE(races.size() == 1);
  sync_report(run, &races);
  // The all-reduce must end after 146 µs (copy_in starts at 145 µs + the empty copy's 1 µs):
  // 100 µs * f > 142 µs, f > 1.42.
  INFO(races[0].detail);
  CHECK(races[0].detail.find("manifests once reduction stream runs 1.42x slower") != std::string::npos);
}

}  // namespace streamhaz::testing

namespace streamhaz::testing {
namespace {

// A legacy-stream memset between two kernels of a blocking stream. TraceBuilder's simulated
// times ignore the legacy-stream barrier, so they are set here as CUDA runs it: K1 0..200 µs,
// the memset waits for it (200..210) and K2 waits for the memset (210..220), from K1's start.
// `needed`: the memset copies from what K1 wrote and K2 reads what it wrote, so both edges
// of its barrier order a conflicting pair; otherwise nothing touches the same bytes.
std::filesystem::path legacy_barrier_dir(bool needed, uint64_t* memset_seq = nullptr) {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId b = r0.stream("worker", /*non_blocking=*/false), legacy = r0.legacy_stream();
  const uint64_t a = r0.alloc(4096, "A"), x = r0.alloc(4096, "B"), c = r0.alloc(4096, "C");
  const uint64_t k1 = r0.kernel(b, "K1", {writes(a, 4096)}, 200);
  const uint64_t m = needed ? r0.memcpy(legacy, x, a, 4096, MemcpyKind::DeviceToDevice, 10)
                            : r0.memset(legacy, x, 4096, 0, 10);
  const uint64_t k2 = r0.kernel(b, "K2", {needed ? reads(x, 4096) : writes(c, 4096)}, 10);
  if (memset_seq) *memset_seq = m;
  std::vector<Record> recs = r0.records();
  uint64_t t0 = 0;
  for (const Record& r : recs)
    if (const auto* t = std::get_if<Timing>(&r); t && t->op_seq == k1) t0 = t->start_ns;
  for (Record& r : recs)
    if (auto* t = std::get_if<Timing>(&r)) {
      if (t->op_seq == m) *t = Timing{m, t0 + 200000, t0 + 210000};
      if (t->op_seq == k2) *t = Timing{k2, t0 + 210000, t0 + 220000};
    }
  const auto dir = fresh_dir();
  std::filesystem::create_directories(dir);
  {
    TraceFileWriter w((dir / "rank0.shz").string(), r0.header());
    for (const Record& r : recs) w.add(r);
  }
  return dir;
}

SyncReport legacy_barrier_report(bool needed, uint64_t* memset_seq = nullptr) {
  const auto dir = legacy_barrier_dir(needed, memset_seq);
  SyncReport rep = analysis::analyze_sync(expand_trace_paths({dir.string()}), {}, {});
  std::filesystem::remove_all(dir);
  return rep;
}

}  // namespace

TEST_CASE("oversync: a legacy-stream barrier that orders nothing and stalls is a finding", "[oversync][legacy]") {
  uint64_t seq = 0;
  const SyncReport rep = legacy_barrier_report(false, &seq);
  REQUIRE(rep.findings.size() == 1);
  const Finding& f = rep.findings[0];
  INFO(f.detail);
  CHECK(f.title.find("implicit barrier of memset") != std::string::npos);
  CHECK(f.title.find("protects nothing") != std::string::npos);
  CHECK(f.second.seq == seq);
  CHECK(f.missing_order.find("non-blocking stream") != std::string::npos);
  // The memset waited 200 µs for K1; without the barrier it runs at once and K2 follows K1:
  // the run ends at 210 µs instead of 220 µs.
  CHECK(f.detail.find("stalled 200.0 µs") != std::string::npos);
  CHECK(f.detail.find("step of 210.0 µs without it") != std::string::npos);
}

TEST_CASE("oversync: a legacy-stream barrier that orders a conflicting pair is not flagged", "[oversync][legacy]") {
  const SyncReport rep = legacy_barrier_report(true);
  CHECK(rep.findings.empty());
  bool protects = false;
  for (const auto& v : rep.verdicts) protects |= v.verdict == SyncJudgement::Protects && v.what.find("implicit barrier") != std::string::npos;
  CHECK(protects);
}

TEST_CASE("replay: a legacy-stream barrier can be dropped, by seq or by kind", "[replay][legacy]") {
  uint64_t seq = 0;
  const auto dir = legacy_barrier_dir(false, &seq);
  const auto records = analysis::load_run(expand_trace_paths({dir.string()}));
  std::filesystem::remove_all(dir);
  const analysis::Replayer replay(records);
  REQUIRE(replay.run_unchanged().step_ns == 220000);
  for (const std::string& spec : {"drop rank=0 seq=" + std::to_string(seq), std::string("drop kind=legacy-barrier")}) {
    analysis::WhatIf w;
    analysis::parse_what_if(spec, w);
    analysis::resolve_barrier_drops(records, w);
    REQUIRE(w.drop == std::set<std::pair<int, uint64_t>>{{0, seq}});
    const auto edited = analysis::apply_edits(records, w);
    CHECK(replay.run(edited, {}, &w.drop).step_ns == 210000);  // the memset no longer waits for K1
    CHECK(replay.run(edited).step_ns == 220000);                // the record stays: only the barrier goes
  }
}

TEST_CASE("oversync: a host synchronisation after a kernel given a pointer into mapped host memory is kept",
          "[oversync]") {
  // The kernel may write the pinned (mapped) buffer through its argument, and the host's reads
  // are not traced: the synchronisation is taken as the host's wait for it.
  for (const bool mapped : {true, false}) {
    TraceBuilder run(1);
    auto& r0 = run.rank(0);
    const StreamId s = r0.stream("s");
    const uint64_t host = r0.host_alloc(4096, /*pinned=*/true), dev = r0.alloc(4096, "D");
    r0.kernel(s, "writes_result", {mapped ? pointer_arg(host) : pointer_arg(dev)}, 100, FootprintTier::Pointer);
    r0.stream_sync(s);
    r0.kernel(s, "next", {}, 10);
    const SyncReport rep = sync_report(run);
    REQUIRE(rep.verdicts.size() == 1);
    CHECK(rep.verdicts[0].verdict == (mapped ? SyncJudgement::HostRead : SyncJudgement::Redundant));
  }
}

}  // namespace streamhaz::testing

namespace streamhaz::testing {
namespace {

// A run with a set-up phase of `setup_syncs` host synchronisations (an engine's initialisation),
// then `steps` training steps in NVTX range "step": each writes X on the reduction stream, waits
// for it on the compute stream and reads it (the wait protects), then waits again (redundant:
// nothing after it on the compute stream needs the reduction stream).
TraceBuilder setup_then_steps(int setup_syncs, int steps) {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "X"), z = r0.alloc(4096, "Z");
  for (int i = 0; i < setup_syncs; ++i) {
    r0.kernel(c, "init", {writes(z, 64)}, 1);
    r0.stream_sync(c);
  }
  for (int i = 0; i < steps; ++i) {
    r0.push_range("step");
    const EventId e = r0.event(), again = r0.event();
    r0.kernel(r, "write_x", {writes(x, 4096)}, 100);
    r0.record(e, r);
    r0.wait(c, e);
    r0.kernel(c, "read_x", {reads(x, 4096)}, 10);
    r0.record(again, r);
    r0.wait(c, again);  // redundant
    r0.kernel(c, "read_z", {reads(z, 4096)}, 10);
    r0.pop_range();
  }
  return run;
}

}  // namespace

TEST_CASE("oversync: the training steps after the warm-up are judged, not the set-up", "[oversync][steps]") {
  // 300 set-up synchronisations: the old window (the first 200 of the trace) judged none of the steps.
  const SyncReport rep = sync_report(setup_then_steps(300, 4));
  CHECK(rep.scope.find("steps 2 to 4 of 4") != std::string::npos);
  CHECK(rep.scope.find("warm-up") != std::string::npos);
  bool protects = false, redundant = false, setup = false;
  for (const auto& v : rep.verdicts) {
    protects |= v.verdict == SyncJudgement::Protects;
    redundant |= v.verdict == SyncJudgement::Redundant && v.what.find("cudaStreamWaitEvent") != std::string::npos;
    setup |= v.what.find("cudaStreamSynchronize") != std::string::npos;
  }
  CHECK(protects);
  CHECK(redundant);
  CHECK_FALSE(setup);  // the set-up's synchronisations are not judged
}

TEST_CASE("oversync: --warmup-steps says how many steps are left out", "[oversync][steps]") {
  const auto dir = fresh_dir();
  setup_then_steps(2, 4).write_dir(dir.string());
  for (const auto& [warmup, scope] : {std::pair{0, "steps 1 to 4 of 4"}, std::pair{2, "steps 3 to 4 of 4"}}) {
    analysis::SyncOptions opt;
    opt.warmup_steps = warmup;
    const SyncReport rep = analysis::analyze_sync(expand_trace_paths({dir.string()}), {}, opt);
    CHECK(rep.scope.find(scope) != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("oversync: GPU times written after the judged steps still cost them", "[oversync][steps]") {
  // CUPTI delivers GPU times late: here every one comes after the last step, past the window.
  TraceBuilder timed = setup_then_steps(2, 4);
  TraceBuilder late(1);
  std::vector<Record> timings;
  Kernel after;  // an operation after the steps: the window ends before it
  for (const Record& r : timed.rank(0).records()) {
    if (std::holds_alternative<Timing>(r)) timings.push_back(r);
    else late.rank(0).add(r);
    if (const auto* k = std::get_if<Kernel>(&r)) after = *k;
  }
  REQUIRE_FALSE(timings.empty());
  after.op.seq += 1000;
  after.op.nvtx = 0;  // outside the steps
  late.rank(0).add(after);
  for (const Record& t : timings) late.rank(0).add(t);
  const SyncReport rep = sync_report(late);
  CHECK(rep.scope.find("steps 2 to 4 of 4") != std::string::npos);
  for (const auto& w : rep.warnings) CHECK(w.find("no GPU times") == std::string::npos);
  CHECK(rep.step_ns > 0);
}

TEST_CASE("oversync: where some steps are timed, the timed ones are judged", "[oversync][steps]") {
  // As the tracer's GPU times by steps (steps:K/N) leave a trace: here steps 4 to 6 of 8 timed.
  TraceBuilder full = setup_then_steps(2, 8);
  TraceBuilder part(1);
  int step = 0;  // 1-based, by pushes seen
  for (const Record& r : full.rank(0).records()) {
    if (const auto* e = std::get_if<RangeEdge>(&r); e && e->push) ++step;
    if (std::holds_alternative<Timing>(r) && (step < 4 || step > 6)) continue;
    part.rank(0).add(r);
  }
  const SyncReport rep = sync_report(part);
  CHECK(rep.scope.find("steps 4 to 6 of 8") != std::string::npos);
  CHECK(rep.step_ns > 0);
}

TEST_CASE("oversync: a wait on an event of the warm-up step is never called redundant", "[oversync][steps]") {
  // Step 1 writes X and records an event; step 2 waits on it and reads X. The window leaves step 1's
  // work out, so only its start fence stands for the write: the wait may protect, and is kept.
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "X");
  const EventId e = r0.event();
  r0.push_range("step");
  r0.kernel(r, "write_x", {writes(x, 4096)}, 100);
  r0.record(e, r);
  r0.kernel(c, "step1_compute", {}, 10);
  r0.pop_range();
  r0.push_range("step");
  r0.wait(c, e);
  r0.kernel(c, "read_x", {reads(x, 4096)}, 10);
  r0.pop_range();
  const SyncReport rep = sync_report(run);
  std::string said = rep.scope;
  for (const auto& line : rep.warnings) said += "\n" + line;
  INFO(said);
  CHECK(rep.scope.find("step 2 of 2") != std::string::npos);
  REQUIRE(rep.verdicts.size() == 1);
  CHECK(rep.verdicts[0].verdict != SyncJudgement::Redundant);
  CHECK(rep.findings.empty());
}

}  // namespace streamhaz::testing

namespace streamhaz::testing {
namespace {

const analysis::SyncVerdict* verdict_of(const SyncReport& rep, const std::string& what) {
  for (const analysis::SyncVerdict& v : rep.verdicts)
    if (v.what == what) return &v;
  return nullptr;
}

}  // namespace

TEST_CASE("oversync: a query that succeeds only because the host waited does not stand in for the wait",
          "[oversync][query]") {
  // DeepSpeed's epilogue: the reduction stream writes the gradient partition, the device is
  // synchronised, the caching allocator polls an event of the reduction stream (it succeeds: the
  // device is idle) and the optimizer reads the partition on the compute stream. Without the
  // synchronisation the poll fails and the read races (seen on an H200), so the synchronisation
  // protects the pair: the poll must not be taken to order it.
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), red = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "partition");
  const EventId e = r0.event();
  r0.kernel(red, "copy_out", {writes(x, 4096)}, 100);
  r0.record(e, red);
  r0.device_sync();
  r0.event_query(e, true);
  r0.kernel(c, "grad_norm", {reads(x, 4096)}, 10);
  const SyncReport rep = sync_report(run);
  const auto* v = verdict_of(rep, "cudaDeviceSynchronize() on device 0");
  REQUIRE(v);
  CHECK(v->verdict == SyncJudgement::Protects);
  CHECK(v->pairs == 1);
}

TEST_CASE("oversync: a query that observes completion on its own orders what it observed", "[oversync][query]") {
  // The host never waited for the reduction stream: its successful query is an observation of
  // its own, and the unrelated stream synchronisation before it protects nothing.
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), red = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "partition");
  const EventId e = r0.event();
  r0.kernel(red, "copy_out", {writes(x, 4096)}, 100);
  r0.record(e, red);
  r0.stream_sync(c);
  r0.event_query(e, true);
  r0.kernel(c, "grad_norm", {reads(x, 4096)}, 10);
  const SyncReport rep = sync_report(run);
  const auto* v = verdict_of(rep, "cudaStreamSynchronize(compute)");
  REQUIRE(v);
  CHECK(v->verdict == SyncJudgement::Redundant);
}

}  // namespace streamhaz::testing

namespace streamhaz::testing {
namespace {

// As setup_then_steps, but with no NVTX range: a broadcast and `setup_syncs` device
// synchronisations first, then steps that each all-reduce twice (two bucket sizes) and end
// waiting for their loss (cudaStreamSynchronize).
TraceBuilder setup_then_unmarked_steps(int setup_syncs, int steps, bool in_step_ranges = false) {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "X"), z = r0.alloc(4096, "Z"), g = r0.alloc(1 << 16, "G");
  r0.nccl(c, NcclKind::Broadcast, g, g, 1024, TraceBuilder::comm(0), 20, 0);
  for (int i = 0; i < setup_syncs; ++i) {
    r0.kernel(c, "init", {writes(z, 64)}, 1);
    r0.device_sync();
  }
  for (int i = 0; i < steps; ++i) {
    if (in_step_ranges) r0.push_range("step");
    const EventId e = r0.event(), again = r0.event();
    r0.kernel(r, "write_x", {writes(x, 4096)}, 100);
    r0.record(e, r);
    r0.wait(c, e);
    r0.kernel(c, "read_x", {reads(x, 4096)}, 10);
    r0.all_reduce(r, g, g, 1024, TraceBuilder::comm(0));
    r0.all_reduce(r, g, g, 2048, TraceBuilder::comm(0));
    r0.record(again, r);
    r0.wait(c, again);  // redundant
    r0.kernel(c, "read_z", {reads(z, 4096)}, 10);
    r0.stream_sync(c);
    if (in_step_ranges) r0.pop_range();
  }
  return run;
}

}  // namespace

TEST_CASE("oversync: without a step range, the steps are the repeating pattern of collectives and host syncs",
          "[oversync][steps]") {
  const SyncReport rep = sync_report(setup_then_unmarked_steps(300, 5));
  CHECK_THAT(rep.scope, Catch::Contains("steps 2 to 5 of 5") && Catch::Contains("warm-up") &&
                            Catch::Contains("the repeating pattern of 3 collectives and host synchronisations"));
  // Costs are per step of the pattern (4 judged), not per judged window.
  const size_t times = rep.scope.find("measured step times of rank 0: ");
  REQUIRE(times != std::string::npos);
  CHECK(std::count(rep.scope.begin() + times, rep.scope.end(), ',') == 3);
  bool protects = false, redundant = false, setup = false;
  for (const auto& v : rep.verdicts) {
    protects |= v.verdict == SyncJudgement::Protects;
    redundant |= v.verdict == SyncJudgement::Redundant && v.what.find("cudaStreamWaitEvent") != std::string::npos;
    setup |= v.what.find("cudaDeviceSynchronize") != std::string::npos;
  }
  CHECK(protects);
  CHECK(redundant);
  CHECK_FALSE(setup);  // the set-up's synchronisations are not judged
}

// setup_then_unmarked_steps as the tracer writes it where GPU times ended after the steps it
// counted itself (`gpu_times_steps_from_pattern`, `period` calls a step): only the operations up
// to the first step's end keep their GPU times. `said_seq`: the seq the entry names, if not that
// step's end (a trace whose times were lost otherwise); `in_step_ranges`: the steps in NVTX ranges.
TraceBuilder times_ended_by_pattern(int period, bool with_meta, uint64_t said_seq = 0, bool in_step_ranges = false) {
  TraceBuilder full = setup_then_unmarked_steps(300, 5, in_step_ranges);
  uint64_t closed_at = 0;
  for (const Record& r : full.rank(0).records())
    if (const auto* s = std::get_if<StreamSync>(&r); s && !closed_at) closed_at = s->seq;
  TraceBuilder cut(1);
  for (const Record& r : full.rank(0).records()) {
    if (const auto* t = std::get_if<Timing>(&r); t && t->op_seq > closed_at) continue;
    cut.rank(0).add(r);
    if (const auto* s = std::get_if<StreamSync>(&r); with_meta && s && s->seq == closed_at)
      cut.rank(0).add(Meta{nlohmann::json{{"gpu_times_steps_from_pattern",
                                           {{"period", period}, {"periods", 4}, {"seq", said_seq ? said_seq : closed_at}}}}
                               .dump()});
  }
  return cut;
}

bool warns(const SyncReport& rep, const std::string& text) {
  return std::any_of(rep.warnings.begin(), rep.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST_CASE("oversync: judged steps after GPU times the tracer ended by its own step count say so", "[oversync][steps]") {
  // The tracer took 2 calls for a step (a loop inside the step), check finds 3.
  const SyncReport shorter = sync_report(times_ended_by_pattern(2, true));
  CHECK(shorter.findings.empty());
  CHECK(warns(shorter, "no costs, so no findings: the judged steps hold no GPU times"));
  CHECK(warns(shorter, "the tracer took 2 collectives and host synchronisations for a step and timed 4 repeats"));
  CHECK(warns(shorter, "check found steps of 3 calls"));
  CHECK(warns(shorter, "judges steps 2 to 5 of 5, issued after them"));
  CHECK(warns(shorter, "NVTX range 'step'"));
  // The same period: only the judged steps came after the timed ones.
  const SyncReport same = sync_report(times_ended_by_pattern(3, true));
  CHECK(warns(same, "for a step and timed 4 repeats"));
  CHECK_FALSE(warns(same, "check found steps of"));
  CHECK(warns(same, "check judges steps 2 to 5 of 5, issued after them"));
  // Without the tracer's word, the reason check knows.
  const SyncReport unexplained = sync_report(times_ended_by_pattern(2, false));
  CHECK(warns(unexplained, "the traces hold no GPU times"));
  CHECK_FALSE(warns(unexplained, "the tracer took"));
  // The tracer's word names a call inside the judged steps: their times went elsewhere (a cut),
  // and the pattern is not the reason.
  const SyncReport timed_through = sync_report(times_ended_by_pattern(2, true, 1u << 20));
  CHECK(warns(timed_through, "the traces hold no GPU times"));
  CHECK_FALSE(warns(timed_through, "the tracer took"));
  // Steps from an NVTX range (which began after the tracer's pattern closed the times).
  const SyncReport ranged = sync_report(times_ended_by_pattern(2, true, 0, true));
  CHECK(warns(ranged, "the tracer took 2 collectives"));
  CHECK(warns(ranged, "check judges steps 2 to 5 of 5 from the NVTX range, issued after them"));
}

TEST_CASE("oversync: a trace whose calls do not repeat is judged from its start", "[oversync][steps]") {
  TraceBuilder run(1);
  auto& r0 = run.rank(0);
  const StreamId c = r0.stream("compute");
  const uint64_t g = r0.alloc(1 << 16, "G");
  for (int i = 1; i <= 6; ++i) {  // every collective of another size: no period
    r0.all_reduce(c, g, g, 64 * i, TraceBuilder::comm(0));
    r0.stream_sync(c);
  }
  const SyncReport rep = sync_report(run);
  CHECK_THAT(rep.scope, Catch::Contains("the run's start in traces without steps"));
}

TEST_CASE("oversync: only a trace judged from its start and cut by the window's budget is warned of", "[oversync][steps]") {
  auto warned = [](const SyncReport& rep) {
    return std::any_of(rep.warnings.begin(), rep.warnings.end(),
                       [](const std::string& w) { return w.find("judged within the first") != std::string::npos; });
  };
  // Rank 0 judged from its steps (its set-up left out), rank 1 a launcher's trace: no operation,
  // no step, nothing cut.
  TraceBuilder steps_and_launcher(2);
  auto& r0 = steps_and_launcher.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "X");
  for (int i = 0; i < 300; ++i) {
    r0.kernel(c, "init", {writes(x, 64)}, 1);
    r0.stream_sync(c);
  }
  for (int i = 0; i < 4; ++i) {
    r0.push_range("step");
    const EventId e = r0.event();
    r0.kernel(r, "write_x", {writes(x, 4096)}, 100);
    r0.record(e, r);
    r0.wait(c, e);
    r0.kernel(c, "read_x", {reads(x, 4096)}, 10);
    r0.pop_range();
  }
  steps_and_launcher.rank(1).stream("launcher");
  const auto dir = fresh_dir();
  steps_and_launcher.write_dir(dir.string());
  analysis::SyncOptions opt;
  opt.window_syncs = 1;  // one step: the steps after it are cut
  const SyncReport judged = analysis::analyze_sync(expand_trace_paths({dir.string()}), {}, opt);
  std::filesystem::remove_all(dir);
  CHECK_THAT(judged.scope, Catch::Contains("step 2 of 4"));
  CHECK_FALSE(warned(judged));
  // A trace without steps whose synchronisations outnumber the window's budget (200) is cut.
  TraceBuilder no_steps(1);
  auto& n0 = no_steps.rank(0);
  const StreamId s = n0.stream("compute");
  const uint64_t g = n0.alloc(1 << 20, "G");
  for (int i = 1; i <= 250; ++i) {  // every collective of another size: no repeating pattern
    n0.all_reduce(s, g, g, 64 * i, TraceBuilder::comm(0));
    n0.stream_sync(s);
  }
  CHECK(warned(sync_report(no_steps)));
}

TEST_CASE("oversync: check learns the steps from the race check's read and judges what the pass alone judges",
          "[oversync][steps]") {
  // Steps from the pattern (synthetic) and from a range (real traces: DeepSpeed ZeRO-2, DDP, the
  // reducer's event variant): the pass fed the race check's read must see the same steps as one
  // reading alone (both shape with ShapeReader; test_step_segments holds its sums to a re-read).
  std::vector<std::vector<std::string>> runs;
  const auto dir = fresh_dir();
  setup_then_unmarked_steps(300, 5).write_dir(dir.string());
  runs.push_back(expand_trace_paths({dir.string()}));
  for (const char* name : {"deepspeed-zero2-stock-1gpu-delay", "torch-gpt-ddp-1gpu", "event-2gpu-delay"})
    runs.push_back(expand_trace_paths({std::string(STREAMHAZ_SOURCE_DIR) + "/traces/" + name}));
  for (const auto& files : runs) {
    INFO(files.front());
    const SyncReport alone = analysis::analyze_sync(files, {}, {});
    const analysis::CheckResult checked = analysis::check(analysis::CheckRequest{files, {}, analysis::SyncOptions{}});
    REQUIRE(checked.sync_ran == alone.ran);
    CHECK(checked.analysis.sync_scope == alone.scope);
    CHECK_THAT(alone.scope, !Catch::Contains("the run's start"));  // steps were found
    REQUIRE(checked.analysis.sync_sites.size() == alone.verdicts.size());
    for (size_t i = 0; i < alone.verdicts.size(); ++i) {
      const auto& a = alone.verdicts[i];
      const auto& b = checked.analysis.sync_sites[i];
      CHECK(b.key == a.key);
      CHECK(b.verdict == a.verdict);
      CHECK(b.pairs == a.pairs);
      CHECK(b.stall_ns_per_step == a.stall_ns_per_step);
      CHECK(b.step_without_ns == a.step_without_ns);
      CHECK(b.finding == a.finding);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("check: an observer the caller gives still sees every record when the pass shapes the steps",
          "[oversync][steps]") {
  struct Counter : analysis::RecordObserver {
    uint64_t records = 0;
    void on_record(const trace::Record&) override { ++records; }
  };
  const auto files =
      expand_trace_paths({std::string(STREAMHAZ_SOURCE_DIR) + "/traces/deepspeed-zero2-stock-1gpu-delay"});
  REQUIRE(files.size() == 1);
  auto count = [&](bool sync) {
    Counter counter;
    analysis::AnalysisOptions o;
    o.observe_records = [&](size_t) {
      counter.records = 0;  // a rerun starts afresh
      return &counter;
    };
    const auto result = analysis::check(analysis::CheckRequest{
        files, o, sync ? std::optional<analysis::SyncOptions>(analysis::SyncOptions{}) : std::nullopt});
    CHECK(result.sync_ran == sync);
    return std::pair{counter.records, result.analysis.traces.at(0).records};
  };
  const auto [with_pass, read_with] = count(true);
  const auto [without_pass, read_without] = count(false);
  CHECK(with_pass == read_with);
  CHECK(without_pass == read_without);
  CHECK(with_pass == without_pass);
  CHECK(with_pass > 0);
}

}  // namespace streamhaz::testing
