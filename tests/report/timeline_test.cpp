// The timeline model read back from real trace files written by the trace builder.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/report/timeline.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/writer.h"

namespace fs = std::filesystem;
using namespace streamhaz;
using namespace streamhaz::trace;
using report::Timeline;

namespace {

fs::path temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("streamhaz-timeline-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Timeline timeline_of(const fs::path& dir) {
  const auto result = analysis::analyze(expand_trace_paths({dir.string()}));
  return report::load_timeline(result.traces);
}

// Writes `r` with only the Timing records `keep` accepts (a sampled or untimed capture).
void write_filtered(const RankTraceBuilder& r, const fs::path& path, const std::function<bool(const Timing&)>& keep) {
  TraceFileWriter w(path.string(), r.header());
  for (const Record& rec : r.records())
    if (const auto* t = std::get_if<Timing>(&rec); !t || keep(*t)) w.add(rec);
  w.close();
}

}  // namespace

TEST_CASE("timeline: operations per stream with GPU times, event-wait arrows and NCCL calls") {
  TraceBuilder run(2);
  uint64_t copy_seq = 0, reduce_seq = 0;
  for (int rank = 0; rank < 2; ++rank) {
    auto& r = run.rank(rank);
    const StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream");
    const uint64_t buf = r.alloc(4096, "ipg_buffer[0]"), src = r.alloc(4096);
    copy_seq = r.memcpy(compute, buf, src, 4096);
    const EventId e = r.event();
    r.record(e, compute);
    r.wait(reduction, e);
    r.push_range("average_tensor");
    reduce_seq = r.all_reduce(reduction, buf, buf, 1024, TraceBuilder::comm(0));
    r.pop_range();
  }
  const auto dir = temp_dir("basic");
  run.write_dir(dir.string());
  const Timeline t = timeline_of(dir);
  fs::remove_all(dir);

  REQUIRE(t.ranks.size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    const auto& r = t.ranks[rank];
    CHECK(r.rank == rank);
    CHECK(r.untimed_ops == 0);
    CHECK(r.timed_windows.empty());
    REQUIRE(r.ops.size() == 2);
    const auto& copy = r.ops[0];
    const auto& reduce = r.ops[1];
    CHECK(copy.seq == copy_seq);
    CHECK(r.names[copy.kind] == "memcpy DtoD");
    CHECK(r.streams[copy.stream].name == "compute stream");
    CHECK(r.streams[reduce.stream].name == "reduction stream");
    CHECK(r.names[reduce.kind] == "ncclAllReduce");
    CHECK(r.names[reduce.nvtx] == "average_tensor");
    CHECK(copy.timed);
    CHECK(copy.end_ns > copy.start_ns);
    // The all-reduce waited for the copy's event, so it starts after the copy ended.
    CHECK(reduce.start_ns >= copy.end_ns);
    REQUIRE(r.waits.size() == 1);
    CHECK(r.waits[0].from == 0);
    CHECK(r.waits[0].to == 1);
    REQUIRE(r.collectives.size() == 1);
    CHECK(r.collectives[0].op == 1);
  }
  CHECK(t.ranks[0].collectives[0].comm == t.ranks[1].collectives[0].comm);
  CHECK(t.ranks[0].collectives[0].comm_seq == t.ranks[1].collectives[0].comm_seq);
  CHECK(t.find_op(0, reduce_seq) == 1);
  CHECK(t.find_op(0, 999999) == -1);
}

TEST_CASE("timeline: a wait on an event recorded on the same stream or never recorded draws no arrow") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const StreamId a = r.stream("a"), b = r.stream("b");
  const uint64_t buf = r.alloc(64);
  r.memset(a, buf, 64);
  const EventId e = r.event(), never = r.event();
  r.record(e, a);
  r.wait(a, e);
  r.wait(b, never);
  r.memset(a, buf, 64);
  r.memset(b, buf, 64);
  const auto dir = temp_dir("no-arrow");
  run.write_dir(dir.string());
  const Timeline t = timeline_of(dir);
  fs::remove_all(dir);
  CHECK(t.ranks.at(0).waits.empty());
}

TEST_CASE("timeline: with sampled GPU times, untimed operations are placed by order between timed ones") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  r.set_header_field("gpu_times", "sampled:200/2000");
  const StreamId s = r.stream("compute stream");
  const uint64_t buf = r.alloc(4096);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 9; ++i) seqs.push_back(r.kernel(s, "k", {writes(buf, 64)}, 10));
  // Timed: ops 0-2 and 6-8 (two windows); 3-5 not timed.
  auto timed = [&](const Timing& t) { return t.op_seq < seqs[3] || t.op_seq > seqs[5]; };
  const auto dir = temp_dir("sampled");
  write_filtered(r, dir / "rank0.shz", timed);
  const Timeline t = timeline_of(dir);
  fs::remove_all(dir);

  const auto& rank = t.ranks.at(0);
  CHECK(rank.gpu_times == "sampled:200/2000");
  CHECK(rank.untimed_ops == 3);
  CHECK_FALSE(rank.order_only);
  REQUIRE(rank.ops.size() == 9);
  for (size_t i = 0; i < 9; ++i) CHECK(rank.ops[i].timed == (i < 3 || i > 5));
  for (size_t i = 1; i < 9; ++i) CHECK(rank.ops[i].start_ns >= rank.ops[i - 1].end_ns);
  for (size_t i = 3; i <= 5; ++i) {
    CHECK(rank.ops[i].start_ns >= rank.ops[2].end_ns);
    CHECK(rank.ops[i].end_ns <= rank.ops[6].start_ns);
  }
  REQUIRE(rank.timed_windows.size() == 2);
  CHECK(rank.timed_windows[0].start_ns == rank.ops[0].start_ns);
  CHECK(rank.timed_windows[0].end_ns == rank.ops[2].end_ns);
  CHECK(rank.timed_windows[1].start_ns == rank.ops[6].start_ns);
  CHECK(rank.timed_windows[1].end_ns == rank.ops[8].end_ns);
}

TEST_CASE("timeline: without any GPU time the axis is API order") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  r.set_header_field("gpu_times", "off");
  const StreamId a = r.stream("a"), b = r.stream("b");
  const uint64_t buf = r.alloc(64);
  r.memset(a, buf, 64);
  r.memset(b, buf, 64);
  r.memset(a, buf, 64);
  const auto dir = temp_dir("off");
  write_filtered(r, dir / "rank0.shz", [](const Timing&) { return false; });
  const Timeline t = timeline_of(dir);
  fs::remove_all(dir);
  const auto& rank = t.ranks.at(0);
  CHECK(rank.order_only);
  CHECK(rank.untimed_ops == 3);
  CHECK(rank.timed_windows.empty());
  REQUIRE(rank.ops.size() == 3);
  CHECK(rank.ops[0].start_ns < rank.ops[1].start_ns);
  CHECK(rank.ops[1].start_ns < rank.ops[2].start_ns);
}
