#include <catch2/catch.hpp>

#include <map>

#include "sample_records.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;

TEST_CASE("the builder writes a readable trace with seqs, names and timings", "[format][builder]") {
  TraceBuilder run(2);
  auto& r = run.rank(1);
  StreamId compute = r.stream("compute stream", false);
  StreamId comm = r.stream("reduction stream");
  uint64_t buf = r.alloc(4096, "ipg_buffer[0]");
  EventId done = r.event();
  r.push_range("average_tensor");
  uint64_t copy = r.memcpy(compute, buf, buf + 8192, 4096);
  r.record(done, compute);
  r.wait(comm, done);
  uint64_t ar = r.all_reduce(comm, buf, buf, 1024, TraceBuilder::comm(0), 50);
  r.pop_range();
  r.all_reduce(comm, buf, buf, 1024, TraceBuilder::comm(0), 50);
  std::string dir = temp_path("builder-run");
  run.write_dir(dir);

  std::vector<Record> recs = read_all(dir + "/rank1.shz");
  std::map<StringId, std::string> strings;
  std::map<uint64_t, Timing> timings;
  std::vector<Nccl> ncclcalls;
  uint64_t last_seq = 0;
  for (const Record& rec : recs) {
    if (auto* s = std::get_if<StringDef>(&rec)) strings[s->id] = s->text;
    if (auto* t = std::get_if<Timing>(&rec)) timings[t->op_seq] = *t;
    if (auto* n = std::get_if<Nccl>(&rec)) ncclcalls.push_back(*n);
    if (const OpCommon* op = op_common(rec)) {
      CHECK(op->seq > last_seq);
      last_seq = op->seq;
    }
  }
  REQUIRE(ncclcalls.size() == 2);
  CHECK(ncclcalls[0].comm_seq == 0);
  CHECK(ncclcalls[1].comm_seq == 1);
  CHECK(ncclcalls[0].rank == 1);
  CHECK(ncclcalls[0].nranks == 2);
  CHECK(strings[ncclcalls[0].op.nvtx] == "average_tensor");
  CHECK(ncclcalls[1].op.nvtx == 0);
  REQUIRE(timings.count(copy));
  REQUIRE(timings.count(ar));
  // The all-reduce waited for the copy through the event.
  CHECK(timings[ar].start_ns >= timings[copy].end_ns);
  CHECK(timings[ar].end_ns - timings[ar].start_ns == 50000);
}

TEST_CASE("captured operations run when their graph is launched", "[format][builder]") {
  RankTraceBuilder r(0, 1);
  StreamId s = r.stream("capture");
  uint64_t buf = r.alloc(256);
  GraphId g = r.begin_capture(s);
  uint64_t captured = r.memset(s, buf, 256);
  r.end_capture(s, g);
  r.host_gap(100);
  uint64_t launch = r.graph_launch(s, g);
  bool captured_timed = false, launch_timed = false;
  for (const Record& rec : r.records()) {
    if (auto* t = std::get_if<Timing>(&rec)) {
      captured_timed |= t->op_seq == captured;
      launch_timed |= t->op_seq == launch;
    }
  }
  CHECK_FALSE(captured_timed);
  CHECK(launch_timed);
}

TEST_CASE("expand_trace_paths takes files and folders of .shz files", "[format]") {
  TraceBuilder run(3);
  std::string dir = temp_path("expand");
  run.write_dir(dir);
  std::vector<std::string> files = expand_trace_paths({dir});
  REQUIRE(files.size() == 3);
  CHECK(files[0].ends_with("rank0.shz"));
  CHECK(expand_trace_paths({files[2]}) == std::vector<std::string>{files[2]});
  CHECK_THROWS_WITH(expand_trace_paths({dir + "/nope"}), Catch::Contains("no such file or folder"));
}
