// ZeRO-2 with overlap_comm: the IPG overwrite race of DeepSpeed 0.10.2, its fixes, and the
// index-reset bug. 2 ranks, 3 steps, 4 buckets per step over 2 IPG buffers.
#include <catch2/catch.hpp>

#include "zero2_scenario.h"

using namespace streamhaz::testing;

namespace {
const Finding* find(const AnalysisResult& res, const std::string& buffer, const std::string& first_kind) {
  for (const Finding* f : findings_on(res, buffer))
    if (f->first.kind == first_kind) return f;
  return nullptr;
}

void check_overwrite_race(const Finding* f, uint64_t occurrences) {
  REQUIRE(f != nullptr);
  CHECK(f->first.kind == "ncclAllReduce");
  CHECK(f->first.stream_name == "reduction stream");
  CHECK(f->first.nvtx == "backward/average_tensor");
  CHECK(f->first.role == AccessMode::Write);
  CHECK(f->second.kind == "memcpy DtoD");
  CHECK(f->second.name == "cudaMemcpyAsync");
  CHECK(f->second.stream_name == "compute stream");
  CHECK(f->second.nvtx == "backward");
  CHECK(f->second.role == AccessMode::Write);
  CHECK(f->title.rfind("write-after-write race on ipg_buffer[", 0) == 0);
  CHECK(f->ranks == std::vector<int>{0, 1});
  CHECK(f->first.rank == 0);  // the lowest rank's occurrence is the one shown
  CHECK(f->occurrences == occurrences);
  CHECK(f->tier == FootprintTier::Api);
  CHECK(f->exact);
  CHECK(f->missing_order.find("compute stream must wait for an event recorded on reduction stream after "
                              "ncclAllReduce") != std::string::npos);
  CHECK(f->first.end_ns > f->first.start_ns);  // GPU intervals filled in from Timing records
}
}  // namespace

TEST_CASE("ZeRO-2, DeepSpeed 0.10.2 (reduction waits for compute only): IPG overwrite race", "[zero2]") {
  auto res = analyze_run(zero2({}));
  // Per buffer: the copy overwrites the all-reduce's result (WAW) and the partition the
  // reduction stream is still copying out (WAR). Nothing else races.
  REQUIRE(res.findings.size() == 4);
  for (const char* buffer : {"ipg_buffer[0]", "ipg_buffer[1]"}) {
    INFO(buffer);
    CHECK(findings_on(res, buffer).size() == 2);
    // 2 copies per bucket x 3 steps x 2 ranks, folded into one finding.
    check_overwrite_race(find(res, buffer, "ncclAllReduce"), 12);
    const Finding* war = find(res, buffer, "memcpy DtoD");
    REQUIRE(war != nullptr);
    CHECK(war->title.rfind("write-after-read race on ipg_buffer[", 0) == 0);
    CHECK(war->first.stream_name == "reduction stream");
    CHECK(war->second.stream_name == "compute stream");
    CHECK(war->occurrences == 6);  // one copy per bucket touches this rank's partition
    CHECK(war->buffer.offset == 0);
    CHECK(war->buffer.bytes == 2048);  // rank 0's and rank 1's halves, folded
  }
  CHECK(res.warnings.empty());
}

TEST_CASE("ZeRO-2, two-way wait (DeepSpeed 0.14.3 on) is clean", "[zero2]") {
  Zero2Options o;
  o.sync = Zero2Sync::Serialize;
  CHECK(analyze_run(zero2(o)).findings.empty());
}

TEST_CASE("ZeRO-2, one event per IPG buffer is clean", "[zero2]") {
  Zero2Options o;
  o.sync = Zero2Sync::EventPerBuffer;
  CHECK(analyze_run(zero2(o)).findings.empty());
}

TEST_CASE("ZeRO-2, device synchronize in the flush is clean", "[zero2]") {
  Zero2Options o;
  o.sync = Zero2Sync::Device;
  CHECK(analyze_run(zero2(o)).findings.empty());
}

TEST_CASE("ZeRO-2, reduction stream synchronize in the flush is clean", "[zero2]") {
  Zero2Options o;
  o.sync = Zero2Sync::Host;
  CHECK(analyze_run(zero2(o)).findings.empty());
}

TEST_CASE("ZeRO-2, index reset (single buffer) with a one-way wait races on ipg_buffer[0]", "[zero2]") {
  Zero2Options o;
  o.index_reset = true;
  auto res = analyze_run(zero2(o));
  REQUIRE(res.findings.size() == 2);
  CHECK(findings_on(res, "ipg_buffer[0]").size() == 2);
  // Buckets 1-3 of every step overwrite the buffer bucket 0..2 is still reducing.
  check_overwrite_race(find(res, "ipg_buffer[0]", "ncclAllReduce"), 2 * 3 * 3 * 2);
}

TEST_CASE("ZeRO-2, index reset with per-buffer events is still clean", "[zero2]") {
  Zero2Options o;
  o.index_reset = true;
  o.sync = Zero2Sync::EventPerBuffer;
  CHECK(analyze_run(zero2(o)).findings.empty());
}
