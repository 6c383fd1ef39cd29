// The sharded check (streamhaz-check-mpi's engine) on threads instead of MPI processes: the
// same findings, summaries and warnings as the one-process check, for any process count.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "scenario.h"
#include "streamhaz/analysis/sharded.h"

using namespace streamhaz::testing;

namespace {

// All-gather among threads: the last to arrive publishes everyone's bytes.
struct Board {
  explicit Board(int n) : slots(n) {}
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::string> slots, published;
  int arrived = 0;
  uint64_t round = 0;
};

class ThreadExchange : public streamhaz::analysis::ShardExchange {
 public:
  ThreadExchange(Board& b, int me) : b_(b), me_(me) {}
  int processes() const override { return static_cast<int>(b_.slots.size()); }
  int me() const override { return me_; }
  std::vector<std::string> all_gather(const std::string& mine) override {
    std::unique_lock lock(b_.m);
    b_.slots[me_] = mine;
    const uint64_t round = b_.round;
    if (++b_.arrived == processes()) {
      b_.published = b_.slots;
      b_.arrived = 0;
      ++b_.round;
      b_.cv.notify_all();
    } else {
      b_.cv.wait(lock, [&] { return b_.round != round; });
    }
    return b_.published;
  }

 private:
  Board& b_;
  int me_;
};

AnalysisResult sharded(const std::vector<std::string>& files, int processes) {
  Board board(processes);
  std::vector<AnalysisResult> results(processes);
  std::vector<std::thread> threads;
  for (int p = 0; p < processes; ++p)
    threads.emplace_back([&, p] {
      ThreadExchange ex(board, p);
      results[p] = streamhaz::analysis::analyze_shard(files, {}, ex);
    });
  for (auto& t : threads) t.join();
  for (int p = 1; p < processes; ++p) CHECK(results[p].findings.empty());
  return results[0];
}

std::string describe(const AnalysisResult& r) {
  std::string out;
  for (const Finding& f : r.findings)
    out += f.key + " #" + std::to_string(f.occurrences) + " " + std::to_string(f.first.rank) + ":" +
           std::to_string(f.first.seq) + "/" + std::to_string(f.second.seq) + " " + std::to_string(f.buffer.offset) +
           "+" + std::to_string(f.buffer.bytes) + " t" + std::to_string(f.first.start_ns) + "\n";
  for (const auto& t : r.traces)
    out += t.path + " rank " + std::to_string(t.rank) + " ops " + std::to_string(t.operations) + "\n";
  for (const auto& w : r.warnings) out += "warning: " + w + "\n";
  out += "checked " + std::to_string(r.operations_checked);
  return out;
}

// Ranks 1..world-1 race like ZeRO-2 without the per-buffer wait; the last rank never reaches
// the final all-reduce (a partial collective, released at the standstill).
TraceBuilder job(int world) {
  TraceBuilder run(world);
  for (int i = 0; i < world; ++i) {
    RankTraceBuilder& r = run.rank(i);
    StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream");
    uint64_t ipg = r.alloc(4096, "ipg_buffer"), grad = r.alloc(4096, "grad");
    EventId ready = r.event(), done = r.event();
    for (int step = 0; step < 4; ++step) {
      r.kernel(compute, "backward", {writes(grad, 4096)});
      if (i == 0) r.wait(compute, done);
      r.memcpy(compute, ipg, grad, 4096);
      r.record(ready, compute);
      r.wait(reduction, ready);
      if (step < 3 || i != world - 1) r.all_reduce(reduction, ipg, ipg, 1024, TraceBuilder::comm(0));
      r.record(done, reduction);
    }
  }
  return run;
}

}  // namespace

TEST_CASE("the sharded check gives the one-process result for any number of processes", "[sharded]") {
  const int world = GENERATE(2, 5, 8);
  const auto dir = fresh_dir();
  job(world).write_dir(dir.string());
  const auto files = expand_trace_paths({dir.string()});
  const AnalysisResult one = streamhaz::analysis::analyze(files);
  REQUIRE(!one.findings.empty());
  REQUIRE(!one.warnings.empty());  // the partial all-reduce
  for (int processes : {1, 2, 3, 4}) {
    CAPTURE(world, processes);
    CHECK(describe(sharded(files, processes)) == describe(one));
  }
  std::filesystem::remove_all(dir);
}

namespace {

// Every process's outcome: its result, or the message of what it threw.
struct ShardOutcome {
  AnalysisResult result;
  std::string error;
};

std::vector<ShardOutcome> sharded_outcomes(const std::vector<std::string>& files, int processes) {
  Board board(processes);
  std::vector<ShardOutcome> out(processes);
  std::vector<std::thread> threads;
  for (int p = 0; p < processes; ++p)
    threads.emplace_back([&, p] {
      ThreadExchange ex(board, p);
      try {
        out[p].result = streamhaz::analysis::analyze_shard(files, {}, ex);
      } catch (const streamhaz::analysis::IrregularCollectives& e) {
        out[p].error = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return out;
}

// A 4-rank job in which rank 2 issues the first all-reduce's (communicator, sequence number)
// again after every rank completed it: irregular input, on which the processes' copies of the
// matcher could drift apart.
TraceBuilder repeated_collective_job() {
  constexpr int kWorld = 4;
  TraceBuilder run(kWorld);
  for (int i = 0; i < kWorld; ++i) {
    RankTraceBuilder& r = run.rank(i);
    StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream");
    uint64_t buf = r.alloc(4096, "bucket");
    EventId done = r.event();
    for (int step = 0; step < 3; ++step) {
      r.kernel(compute, "backward", {writes(buf, 4096)});
      r.all_reduce(reduction, buf, buf, 1024, TraceBuilder::comm(0));
      if (i == 2 && step == 1) {
        streamhaz::trace::Nccl again;
        again.op.seq = 900000;
        again.op.stream = reduction;
        again.kind = streamhaz::trace::NcclKind::AllReduce;
        again.sendbuf = again.recvbuf = buf;
        again.count = 1024;
        again.elem_bytes = 4;
        again.comm = TraceBuilder::comm(0);
        again.rank = 2;
        again.nranks = kWorld;
        again.comm_seq = 0;
        r.add(again);
      }
      r.record(done, reduction);
      r.wait(compute, done);
    }
  }
  return run;
}

}  // namespace

TEST_CASE("the sharded check stops with one error on a collective posted again after it completed", "[sharded]") {
  const auto dir = fresh_dir();
  repeated_collective_job().write_dir(dir.string());
  const auto files = expand_trace_paths({dir.string()});
  // The one-process check runs such input in one order and reports on it.
  REQUIRE_NOTHROW(streamhaz::analysis::analyze(files));
  for (int processes : {1, 2, 4}) {
    CAPTURE(processes);
    const std::vector<ShardOutcome> out = sharded_outcomes(files, processes);
    // Every process stops in the same round, with the same message: what and where.
    for (const ShardOutcome& o : out) {
      CHECK(o.error == out[0].error);
      CHECK(o.result.findings.empty());
    }
    CHECK_THAT(out[0].error, Catch::Matchers::Contains("rank2.shz") &&
                                 Catch::Matchers::Contains("again after it completed") &&
                                 Catch::Matchers::Contains("sequence number 0") &&
                                 Catch::Matchers::Contains("streamhaz check"));
  }
  std::filesystem::remove_all(dir);
}
