// The pointer footprint tier: a kernel whose only footprint is a launch argument pointing into
// a traced allocation, with its direction where a calling convention gives it. Its pairs are
// found only against an access of another tier covering the pointed-at byte, or another
// pointer-tier kernel given the same pointer; pointer_evidence.h says which are races (a write
// on the other side, or a directed write) and which only possible races.
#include <catch2/catch.hpp>

#include "scenario.h"

using namespace streamhaz::testing;
using streamhaz::analysis::FindingKind;

namespace {

constexpr auto kPointer = FootprintTier::Pointer;

// PyTorch's freed-block case: a tensor read on a side stream dies without record_stream, its
// block is handed to the main stream and refilled there.
struct FreedBlock {
  TraceBuilder run{1};
  RankTraceBuilder& r = run.rank(0);
  StreamId main = r.stream("main stream"), side = r.stream("side stream");
  uint64_t segment = r.alloc(1 << 20);  // the caching allocator's segment
  uint64_t block = segment + 8192;
  EventId side_done = r.event();

  void side_read() {
    r.kernel(side, "side_reader", {pointer_arg(block)}, 10, kPointer);
    r.record(side_done, side);
  }
};

}  // namespace

TEST_CASE("pointer tier: a refill by memcpy of bytes a side-stream kernel was given is a race", "[pointer]") {
  FreedBlock t;
  t.side_read();
  t.r.memcpy(t.main, t.block, t.segment + 65536, 4096);
  const AnalysisResult res = analyze_run(t.run);
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.kind == FindingKind::Race);
  CHECK(f.title.rfind("write-after-write race on allocation 0x", 0) == 0);
  CHECK(f.first.name == "side_reader");
  CHECK(f.first.role == AccessMode::ReadWrite);
  CHECK(f.second.kind == "memcpy DtoD");
  CHECK(f.buffer.offset == 8192);
  CHECK(f.tier == kPointer);
  CHECK_FALSE(f.exact);
  CHECK(f.key.rfind("race|", 0) == 0);
  CHECK(f.detail.find("received a pointer to byte 8192") != std::string::npos);
  CHECK(f.detail.find("--footprints exact") != std::string::npos);
}

TEST_CASE("pointer tier: a kernel given a pointer to bytes an unordered read covers", "[pointer]") {
  // The reduce-scatter-reuse case: a collective still reads the block a refill kernel writes.
  FreedBlock t;
  t.r.memcpy(t.side, t.segment + 65536, t.block, 4096);  // reads the block on the side stream
  t.r.kernel(t.main, "opaque", {pointer_arg(t.block)}, 10, kPointer);
  CHECK(analyze_run(t.run).findings.empty());  // direction unknown: it may only read too
  t.r.kernel(t.main, "refill", {pointer_arg(t.block, AccessMode::Write)}, 10, kPointer);
  const AnalysisResult res = analyze_run(t.run);
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].kind == FindingKind::Race);
  CHECK(res.findings[0].first.kind == "memcpy DtoD");
  CHECK(res.findings[0].first.role == AccessMode::Read);
  CHECK(res.findings[0].second.name == "refill");
  CHECK(res.findings[0].second.role == AccessMode::Write);
  CHECK(res.findings[0].detail.find("TensorIterator convention") != std::string::npos);
}

TEST_CASE("pointer tier: a directed write meets a directed read given the same pointer: a race", "[pointer]") {
  FreedBlock t;
  t.r.kernel(t.side, "side_reader", {pointer_arg(t.block, AccessMode::Read)}, 10, kPointer);
  t.r.kernel(t.main, "other_reader", {pointer_arg(t.block, AccessMode::Read)}, 10, kPointer);
  CHECK(analyze_run(t.run).findings.empty());  // two reads
  t.r.kernel(t.main, "refill", {pointer_arg(t.block, AccessMode::Write)}, 10, kPointer);
  const AnalysisResult res = analyze_run(t.run);
  REQUIRE(res.findings.size() == 1);  // against the side reader; the main one is ordered before
  CHECK(res.findings[0].kind == FindingKind::Race);
  CHECK(res.findings[0].first.name == "side_reader");
  CHECK(res.findings[0].title.rfind("write-after-read race", 0) == 0);
}

TEST_CASE("pointer tier: a directed read does not hide an earlier write from a later access", "[pointer]") {
  FreedBlock t;
  t.r.kernel(t.side, "side_writer", {pointer_arg(t.block, AccessMode::Write)}, 10, kPointer);
  const EventId written = t.r.event();
  t.r.record(written, t.side);
  t.r.wait(t.main, written);
  t.r.kernel(t.side, "side_reader", {pointer_arg(t.block, AccessMode::Read)}, 10, kPointer);  // after the write
  const StreamId third = t.r.stream("third stream");
  t.r.kernel(third, "third_reader", {pointer_arg(t.block, AccessMode::Read)}, 10, kPointer);
  const AnalysisResult res = analyze_run(t.run);
  REQUIRE(res.findings.size() == 1);  // the write, not the read it was followed by
  CHECK(res.findings[0].first.name == "side_writer");
  CHECK(res.findings[0].kind == FindingKind::Race);
}

TEST_CASE("pointer tier: an event wait before the refill clears it", "[pointer]") {
  FreedBlock t;
  t.side_read();
  t.r.wait(t.main, t.side_done);
  t.r.memcpy(t.main, t.block, t.segment + 65536, 4096);
  CHECK(analyze_run(t.run).findings.empty());
}

TEST_CASE("pointer tier: two kernels given the same pointer, unordered, are a possible race", "[pointer]") {
  FreedBlock t;
  t.side_read();
  t.r.kernel(t.main, "refill", {pointer_arg(t.block)}, 10, kPointer);
  const AnalysisResult res = analyze_run(t.run);
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].kind == FindingKind::PossibleRace);
  CHECK(res.findings[0].second.name == "refill");
}

TEST_CASE("pointer tier: different pointers into one segment are not evidence of a conflict", "[pointer]") {
  FreedBlock t;
  t.side_read();
  t.r.kernel(t.main, "other_tensor", {pointer_arg(t.block + 4096)}, 10, kPointer);
  // A write that does not cover the pointed-at byte says nothing about the side kernel either.
  t.r.memset(t.main, t.block + 4096, 4096);
  CHECK(analyze_run(t.run).findings.empty());
}

TEST_CASE("pointer tier: a kernel given a pointer to bytes an unordered write produced is a race", "[pointer]") {
  FreedBlock t;
  t.r.memset(t.main, t.block, 4096);  // API-tier write on the main stream
  t.r.kernel(t.side, "side_reader", {pointer_arg(t.block)}, 10, kPointer);
  const AnalysisResult res = analyze_run(t.run);
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].kind == FindingKind::Race);
  CHECK(res.findings[0].first.kind == "memset");
  CHECK(res.findings[0].first.role == AccessMode::Write);
  CHECK(res.findings[0].second.name == "side_reader");
}

TEST_CASE("pointer tier: a stronger tier of the same kernel replaces the pointer accesses it covers", "[pointer]") {
  FreedBlock t;
  const uint64_t other = t.block + 8192;
  // Exact ranges cover the pointed-at bytes: only a read. Kept as a pointer access, the argument
  // would meet the main stream's pointer-tier kernel given the same pointer.
  t.r.kernel(t.side, "side_reader", {pointer_arg(other), reads(other, 4096)}, 10, FootprintTier::Exact);
  t.r.kernel(t.main, "opaque_user", {pointer_arg(other)}, 10, kPointer);
  const AnalysisResult res = analyze_run(t.run);
  CHECK(res.findings.empty());
  CHECK(res.kernels_by_tier[size_t(FootprintTier::Exact)] == 1);
  CHECK(res.kernels_by_tier[size_t(kPointer)] == 1);
}

TEST_CASE("pointer tier: a pointer argument outside a stronger tier's ranges still counts", "[pointer]") {
  FreedBlock t;
  // The instrumentation saw other bytes only; the argument may reach memory it could not see.
  t.r.kernel(t.side, "side_reader", {pointer_arg(t.block), reads(t.block + 8192, 4096)}, 10, FootprintTier::Exact);
  t.r.memcpy(t.main, t.block, t.segment + 65536, 4096);
  const AnalysisResult res = analyze_run(t.run);
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].kind == FindingKind::PossibleRace);
  CHECK(res.findings[0].tier == kPointer);
}

TEST_CASE("pointer tier: coverage counts kernels by their weakest tier", "[pointer]") {
  FreedBlock t;
  t.side_read();
  t.r.kernel(t.main, "summarised", {writes(t.block + 8192, 64)}, 10, FootprintTier::Static);
  t.r.kernel(t.main, "opaque");  // no footprint at all
  const AnalysisResult res = analyze_run(t.run);
  CHECK(res.kernels_by_tier[size_t(kPointer)] == 1);
  CHECK(res.kernels_by_tier[size_t(FootprintTier::Static)] == 1);
  CHECK(res.operations_without_footprint == 1);
}

TEST_CASE("pointer tier: a fresh allocation at the same address forgets the pointer accesses", "[pointer]") {
  TraceBuilder run(1);
  RankTraceBuilder& r = run.rank(0);
  StreamId main = r.stream("main stream"), side = r.stream("side stream");
  const uint64_t p = r.alloc(4096);
  r.kernel(side, "side_reader", {pointer_arg(p)}, 10, kPointer);
  r.free(p, AllocKind::Async, side);  // stream-ordered release on the side stream
  r.alloc_at(p, 4096, {}, AllocKind::Async, main);
  r.memset(main, p, 4096);
  CHECK(analyze_run(run).findings.empty());
}
