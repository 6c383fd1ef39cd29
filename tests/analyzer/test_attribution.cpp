// Attribution: the stacks a trace holds reach the findings (both operations, the buffer's
// allocation site, the streams' origins) without changing what a finding is.
#include <catch2/catch.hpp>

#include <sstream>

#include "scenario.h"
#include "streamhaz/analysis/attribution.h"
#include "streamhaz/analysis/sync.h"
#include "streamhaz/report/json_report.h"
#include "streamhaz/report/text_report.h"

using namespace streamhaz::testing;
using streamhaz::analysis::StreamOriginKind;

namespace {

constexpr const char* kStage = "/usr/lib/python3/dist-packages/deepspeed/runtime/zero/stage_1_and_2.py";

struct Options {
  bool stacks = true;
  bool caching_allocator = false;  // the bucket comes from PyTorch's caching allocator
  bool pool = true;                // the reduction stream is one of a pool made by one call
  // The all-reduce and the pool's creation go through DeepSpeed's torch.distributed facade
  // (deepspeed.comm), as on real runs: the pool is made by the first collective, a broadcast.
  bool comm_wrappers = false;
  bool comm_caller = true;  // with comm_wrappers: the all-reduce's stack has DeepSpeed's caller
  // PyTorch's allocator history (caching_allocator only): none, handed over, refused with a
  // reason, or switched on but never handed over.
  enum class History { None, Recorded, Unavailable, Requested } history = History::None;
  bool segment_from_native_thread = false;  // caching_allocator: requested with no Python frame (autograd's thread)
};

constexpr const char* kSite = "/opt/venv/lib/python3.10/site-packages/";

std::vector<BuilderFrame> through_comm(const char* collective, uint32_t c10d_line, uint32_t backend_line) {
  return {py(std::string(kSite) + "torch/distributed/distributed_c10d.py", c10d_line, collective),
          py(std::string(kSite) + "torch/distributed/c10d_logger.py", 83, "_exception_logger.<locals>.wrapper"),
          py(std::string(kSite) + "deepspeed/comm/torch.py", backend_line, std::string("TorchBackend.") + collective),
          py(std::string(kSite) + "deepspeed/comm/comm.py", 117, "timed_op.<locals>.log_wrapper"),
          py(std::string(kSite) + "deepspeed/comm/comm.py", 520, collective)};
}

std::vector<BuilderFrame> then(std::vector<BuilderFrame> inner, const std::vector<BuilderFrame>& outer) {
  inner.insert(inner.end(), outer.begin(), outer.end());
  return inner;
}

// The ZeRO-2 bucket race: a copy into the bucket on one stream, the all-reduce of its previous
// contents on another, nothing ordering them.
TraceBuilder bucket_race(const Options& o) {
  TraceBuilder run(1);
  RankTraceBuilder& r = run.rank(0);
  const ModuleId c10 = r.module("/opt/venv/lib/python3.10/site-packages/torch/lib/libc10_cuda.so", 0x7f1000000000,
                                0x100000, "00112233");
  const CallsiteId init = r.stack({py(kStage, 120, "__init__"), py("/home/user/train.py", 30, "main")});
  const CallsiteId alloc = o.segment_from_native_thread ? r.stack({native(c10, 0x4242), native(c10, 0x5151)})
                           : o.caching_allocator
                               ? r.stack({native(c10, 0x4242), py("/opt/venv/lib/python3.10/site-packages/torch/"
                                                                  "cuda/memory.py", 80, "empty"),
                                          py(kStage, 130, "__init__"), py("/home/user/train.py", 30, "main")})
                               : r.stack({py(kStage, 130, "__init__"), py("/home/user/train.py", 30, "main")});
  const CallsiteId copy = r.stack({py("/opt/venv/lib/python3.10/site-packages/torch/_tensor.py", 9, "copy_"),
                                   py(kStage, 912, "copy_grads_in_partition"), py("/home/user/train.py", 44, "main")});
  const CallsiteId reduce =
      !o.comm_wrappers ? r.stack({py(kStage, 1100, "average_tensor"), py("/home/user/train.py", 44, "main")})
      : o.comm_caller
          ? r.stack(then(through_comm("all_reduce", 2501, 151),
                         {py(kStage, 1100, "DeepSpeedZeroOptimizer.average_tensor"), py("/home/user/train.py", 44, "main")}))
          : r.stack(through_comm("all_reduce", 2501, 151));  // a stack cut short: wrappers and torch only
  if (o.stacks) r.use_stack(init);
  const StreamId compute = r.stream("", false);  // unnamed, made by its own call
  const std::vector<BuilderFrame> pool_maker =
      !o.comm_wrappers ? std::vector<BuilderFrame>{py(kStage, 140, "__init__")}
                       : then(through_comm("broadcast", 2201, 192),
                              {py(std::string(kSite) + "deepspeed/runtime/engine.py", 1234, "DeepSpeedEngine._broadcast_model")});
  if (o.stacks && o.pool)
    r.use_stack(r.stack(then({py(std::string(kSite) + "torch/cuda/streams.py", 30, "__new__")}, pool_maker)));
  const StreamId reduction = r.stream("");
  const StreamId spare = r.stream("");
  (void)spare;
  if (o.stacks) r.use_stack(alloc);
  const uint64_t segment = r.alloc(1 << 20);
  const uint64_t bucket = segment + 4096;
  const uint64_t grads = r.alloc(1 << 16);
  if (o.stacks) r.use_stack(reduce);
  const uint64_t reduce_seq = r.all_reduce(reduction, bucket, bucket, 1024, TraceBuilder::comm(0));
  if (o.stacks) r.use_stack(copy);
  const uint64_t copy_seq = r.memcpy(compute, bucket, grads, 4096);
  if (o.history != Options::History::None) r.set_header_field("allocator_history", {{"status", "requested"}});
  if (o.history == Options::History::Recorded) {
    // As the tracer writes them at exit: blocks placed by the first call after them. Only the
    // bucket was live at the copy: one from an earlier segment at that address, one older and
    // one newer than the bucket within the segment.
    const uint64_t segment_seq = reduce_seq - 2, grads_seq = reduce_seq - 1;
    const CallsiteId stale = r.stack({py(kStage, 90, "old_segment"), py("/home/user/train.py", 20, "main")});
    const CallsiteId older = r.stack({py(kStage, 131, "scratch"), py("/home/user/train.py", 30, "main")});
    const CallsiteId own = r.stack({py(kStage, 135, "initialize_ipg_bucket"), py("/home/user/train.py", 30, "main")});
    const CallsiteId newer = r.stack({py(kStage, 200, "later"), py("/home/user/train.py", 50, "main")});
    r.add(TensorAlloc{segment_seq, bucket, 4096, 0, 0, stale});
    r.add(TensorAlloc{grads_seq, segment, 8192, 0, 0, older});
    r.add(TensorAlloc{reduce_seq, bucket, 4096, 0, 0, own});
    r.add(TensorAlloc{copy_seq + 1, bucket, 4096, 0, 0, newer});
    r.add(Meta{R"({"allocator_history":{"status":"recorded","allocations":4}})"});
  } else if (o.history == Options::History::Unavailable) {
    r.add(Meta{R"({"allocator_history":{"status":"unavailable","reason":"PyTorch could not record its allocator )"
               R"(history: RuntimeError: not supported by cudaMallocAsync"}})"});
  }
  return run;
}

AnalysisResult attributed(const TraceBuilder& run) {
  const auto dir = fresh_dir();
  run.write_dir(dir.string());
  AnalysisResult result = streamhaz::analysis::analyze(expand_trace_paths({dir.string()}), {});
  streamhaz::analysis::attach_stacks(result);
  std::filesystem::remove_all(dir);
  return result;
}

// With the over-synchronisation pass's findings too.
AnalysisResult attributed_with_sync(const TraceBuilder& run) {
  const auto dir = fresh_dir();
  run.write_dir(dir.string());
  const auto files = expand_trace_paths({dir.string()});
  AnalysisResult res = streamhaz::analysis::analyze(files, {});
  streamhaz::analysis::SyncReport rep = streamhaz::analysis::analyze_sync(files, {}, {}, &res.findings);
  for (Finding& f : rep.findings) res.findings.push_back(std::move(f));
  streamhaz::analysis::attach_stacks(res);
  std::filesystem::remove_all(dir);
  return res;
}

std::string text_of(const AnalysisResult& a, bool full = false) {
  streamhaz::report::ReportInput input;
  input.analysis = a;
  input.full_stacks = full;
  std::ostringstream out;
  streamhaz::report::write_text_report(out, input);
  return out.str();
}

}  // namespace

TEST_CASE("a race's operations carry the stacks they were issued from", "[attribution]") {
  const AnalysisResult res = attributed(bucket_race({}));
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  REQUIRE(f.second.stack.size() == 3);
  CHECK(f.second.stack[1].file == kStage);
  CHECK(f.second.stack[1].line == 912);
  CHECK(f.second.stack[1].function == "copy_grads_in_partition");
  REQUIRE(f.first.stack.size() == 2);
  CHECK(f.first.stack[0].line == 1100);
  CHECK(f.first.kind == "ncclAllReduce");

  SECTION("the buffer is named by its allocation site, with the bytes within the allocation") {
    CHECK(f.buffer.allocation != 0);
    CHECK(f.buffer.allocation_bytes == 1 << 20);
    REQUIRE(f.buffer.alloc_stack.size() == 2);
    CHECK(f.buffer.alloc_stack[0].line == 130);
    CHECK_FALSE(f.buffer.caching_allocator);
    const std::string text = text_of(res);
    CHECK_THAT(text, Catch::Contains("Buffer: allocation at stage_1_and_2.py:130 in __init__ (0x") &&
                         Catch::Contains("bytes [4096, 8192)"));
  }
  SECTION("a stream with its own creation call is named by it") {
    CHECK(f.second.stream_origin.kind == StreamOriginKind::Created);
    REQUIRE_FALSE(f.second.stream_origin.stack.empty());
    CHECK(f.second.stream_origin.stack[0].line == 120);
    CHECK_THAT(text_of(res), Catch::Contains("stream 1 (created at stage_1_and_2.py:120 in __init__)"));
  }
  SECTION("a stream of a pool made by one call is named by its first use") {
    CHECK(f.first.stream_origin.kind == StreamOriginKind::FirstUsed);
    REQUIRE_FALSE(f.first.stream_origin.stack.empty());
    CHECK(f.first.stream_origin.stack[0].line == 1100);
    CHECK(f.first.stream_origin.pool_streams == 2);
    REQUIRE(f.first.stream_origin.pool_stack.size() == 2);
    CHECK(f.first.stream_origin.pool_stack[1].line == 140);
    CHECK_THAT(text_of(res), Catch::Contains("stream 2 (first used at stage_1_and_2.py:1100 in average_tensor, one of 2 "
                                             "streams created together at stage_1_and_2.py:140 in __init__)"));
  }
  SECTION("the text report folds torch frames unless asked for full stacks") {
    const std::string text = text_of(res);
    CHECK_THAT(text, Catch::Contains("[1 frame in torch]") &&
                         Catch::Contains("#1 deepspeed/runtime/zero/stage_1_and_2.py:912 in copy_grads_in_partition") &&
                         Catch::Contains("#2 /home/user/train.py:44 in main"));
    CHECK_THAT(text, !Catch::Contains("_tensor.py"));
    CHECK_THAT(text_of(res, true), Catch::Contains("#0 torch/_tensor.py:9 in copy_") && !Catch::Contains("frame in torch"));
  }
  SECTION("JSON carries the stacks") {
    streamhaz::report::ReportInput input;
    input.analysis = res;
    const auto j = streamhaz::report::json_report(input);
    const auto& second = j["findings"][0]["second"];
    CHECK(second["stack"][1]["line"] == 912);
    CHECK(second["stack"][1]["kind"] == "python");
    CHECK(second["stream_origin"]["how"] == "created");
    CHECK(j["findings"][0]["buffer"]["alloc_stack"][0]["function"] == "__init__");
  }
}

TEST_CASE("a stream first used inside DeepSpeed's communication wrapper is placed at the wrapper's caller",
          "[attribution]") {
  const AnalysisResult res = attributed(bucket_race({.comm_wrappers = true}));
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.first.kind == "ncclAllReduce");
  REQUIRE(f.first.stream_origin.stack.size() == 7);
  // The line named is DeepSpeed's own call, past torch.distributed and deepspeed.comm; the pool's
  // creation likewise names the caller of the broadcast.
  const std::string text = text_of(res);
  CHECK_THAT(text, Catch::Contains("stream 2 (first used at stage_1_and_2.py:1100 in "
                                   "DeepSpeedZeroOptimizer.average_tensor, one of 2 streams created together at "
                                   "engine.py:1234 in DeepSpeedEngine._broadcast_model)"));
  CHECK_THAT(text, !Catch::Contains("torch.py:") && !Catch::Contains("comm.py:"));
  // The folded stack says what it folded; torch.distributed's wrappers and deepspeed.comm fold
  // into one line.
  CHECK_THAT(text, Catch::Contains("[5 frames in torch, deepspeed.comm]") &&
                       Catch::Contains("#5 deepspeed/runtime/zero/stage_1_and_2.py:1100 in "
                                       "DeepSpeedZeroOptimizer.average_tensor"));

  SECTION("--full-stacks shows every frame, the wrappers' included") {
    const std::string full = text_of(res, true);
    CHECK_THAT(full, Catch::Contains("#0 torch/distributed/distributed_c10d.py:2501 in all_reduce") &&
                         Catch::Contains("#2 deepspeed/comm/torch.py:151 in TorchBackend.all_reduce") &&
                         Catch::Contains("#4 deepspeed/comm/comm.py:520 in all_reduce") &&
                         Catch::Contains("#5 deepspeed/runtime/zero/stage_1_and_2.py:1100") &&
                         !Catch::Contains("frames in") && !Catch::Contains("frame in"));
    // The one-line origin is the same with full stacks.
    CHECK_THAT(full, Catch::Contains("stream 2 (first used at stage_1_and_2.py:1100 in "
                                     "DeepSpeedZeroOptimizer.average_tensor"));
  }
  SECTION("JSON keeps every frame") {
    streamhaz::report::ReportInput input;
    input.analysis = res;
    const auto j = streamhaz::report::json_report(input);
    const auto& first = j["findings"][0]["first"];
    REQUIRE(first["stack"].size() == 7);
    CHECK(first["stack"][2]["function"] == "TorchBackend.all_reduce");
    REQUIRE(first["stream_origin"]["stack"].size() == 7);
    CHECK(first["stream_origin"]["pool"]["stack"].size() == 7);
  }
  SECTION("a stack of wrappers and torch alone names the innermost wrapper frame") {
    const AnalysisResult cut = attributed(bucket_race({.comm_wrappers = true, .comm_caller = false}));
    REQUIRE(cut.findings.size() == 1);
    const std::string cut_text = text_of(cut);
    CHECK_THAT(cut_text, Catch::Contains("stream 2 (first used at torch.py:151 in TorchBackend.all_reduce, one of 2"));
    CHECK_THAT(cut_text, Catch::Contains("[5 frames in torch, deepspeed.comm]"));
  }
  SECTION("keys do not change") {
    CHECK(f.key == attributed(bucket_race({})).findings[0].key);
  }
}

TEST_CASE("stacks never change a finding's identity", "[attribution]") {
  const AnalysisResult with = attributed(bucket_race({}));
  const AnalysisResult without = attributed(bucket_race({.stacks = false}));
  REQUIRE(with.findings.size() == 1);
  REQUIRE(without.findings.size() == 1);
  CHECK(with.findings[0].key == without.findings[0].key);
  CHECK(with.findings[0].title == without.findings[0].title);
  CHECK(without.findings[0].second.stack.empty());
  CHECK(without.findings[0].buffer.alloc_stack.empty());
  // Without stacks, the text report reads as before.
  CHECK_THAT(text_of(without), Catch::Contains("Buffer: allocation 0x") && !Catch::Contains("Stack:"));
}

TEST_CASE("a caching-allocator segment is said to serve many tensors", "[attribution]") {
  const AnalysisResult res = attributed(bucket_race({.caching_allocator = true}));
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.buffer.caching_allocator);
  const std::string text = text_of(res);
  CHECK_THAT(text, Catch::Contains("a PyTorch caching-allocator segment serving many tensors") &&
                       Catch::Contains("this tensor: bytes [4096, 8192) of it") &&
                       Catch::Contains("first requested at stage_1_and_2.py:130 in __init__"));
  // The native frame and the torch frame of the allocation are folded.
  CHECK_THAT(text, Catch::Contains("[2 frames in torch]"));
}

TEST_CASE("the allocator history names the tensor's own line, live when the later operation was issued",
          "[attribution]") {
  using History = Options::History;
  const AnalysisResult res = attributed(bucket_race({.caching_allocator = true, .history = History::Recorded}));
  REQUIRE(res.findings.size() == 1);
  const streamhaz::analysis::BufferRef& b = res.findings[0].buffer;
  CHECK(b.caching_allocator);
  REQUIRE(b.tensor != 0);
  CHECK(b.tensor == b.alloc_base + b.offset);
  CHECK(b.tensor_bytes == 4096);
  REQUIRE(!b.tensor_stack.empty());
  CHECK(b.tensor_stack[0].line == 135);
  CHECK(b.tensor_unknown.empty());
  const std::string text = text_of(res);
  CHECK_THAT(text, Catch::Contains("a tensor allocated at stage_1_and_2.py:135 in initialize_ipg_bucket") &&
                       Catch::Contains("4096 bytes, from PyTorch's allocator history), bytes [0, 4096) of it") &&
                       Catch::Contains("first requested at stage_1_and_2.py:130 in __init__") &&
                       Catch::Contains("Tensor allocation stack:") && Catch::Contains("Segment allocation stack:"));
  streamhaz::report::ReportInput input;
  input.analysis = res;
  const auto j = streamhaz::report::json_report(input);
  const auto& tensor = j["findings"][0]["buffer"]["tensor"];
  CHECK(tensor["bytes"] == 4096);
  CHECK(tensor["offset"] == 0);
  CHECK(tensor["stack"][0]["line"] == 135);
  // Where stacks are off the history changes nothing in the finding's identity.
  CHECK(res.findings[0].key == attributed(bucket_race({.caching_allocator = true})).findings[0].key);
}

TEST_CASE("a segment requested on a thread without Python is not named by the allocator's own frame",
          "[attribution]") {
  const AnalysisResult res = attributed(bucket_race(
      {.caching_allocator = true, .history = Options::History::Recorded, .segment_from_native_thread = true}));
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].buffer.caching_allocator);
  const std::string text = text_of(res);
  CHECK_THAT(text, Catch::Contains("a tensor allocated at stage_1_and_2.py:135 in initialize_ipg_bucket") &&
                       Catch::Contains("first requested by native code alone (no Python frame"));
}

TEST_CASE("without the allocator history a caching-allocator finding says why the tensor is unknown",
          "[attribution]") {
  using History = Options::History;
  auto why = [](History h) {
    const AnalysisResult res = attributed(bucket_race({.caching_allocator = true, .history = h}));
    REQUIRE(res.findings.size() == 1);
    CHECK(res.findings[0].buffer.tensor == 0);
    CHECK_THAT(text_of(res), Catch::Contains("This tensor's own line is unknown: "));
    return res.findings[0].buffer.tensor_unknown;
  };
  CHECK_THAT(why(History::None), Catch::Contains("--allocator-history on"));
  CHECK_THAT(why(History::Unavailable), Catch::Contains("not supported by cudaMallocAsync"));
  CHECK_THAT(why(History::Requested), Catch::Contains("never handed over"));
  // A plain cudaMalloc'd buffer is its own tensor: nothing to explain.
  CHECK(attributed(bucket_race({})).findings[0].buffer.tensor_unknown.empty());
}

TEST_CASE("streams made under one call site are placed by their first use", "[attribution]") {
  const AnalysisResult res = attributed(bucket_race({.pool = false}));
  REQUIRE(res.findings.size() == 1);
  // Both streams were made under the same stack: neither creation call names one stream.
  CHECK(res.findings[0].first.stream_origin.kind == StreamOriginKind::FirstUsed);
  CHECK(res.findings[0].second.stream_origin.kind == StreamOriginKind::FirstUsed);
}

TEST_CASE("stack records between a kernel and its accesses do not cut its footprint off", "[attribution]") {
  // A tracer may define a new frame and call site between a launch and its exact-tier Access
  // records: the kernel's footprint must still reach the race check.
  TraceBuilder run(1);
  RankTraceBuilder& r = run.rank(0);
  const StreamId a = r.stream("a"), b = r.stream("b");
  const uint64_t buf = r.alloc(4096, "buf");
  r.kernel(a, "writer_a", {writes(buf, 4096)}, 10, FootprintTier::Exact);
  const uint64_t k = r.kernel(b, "writer_b", {}, 10, FootprintTier::Exact);
  r.add(StringDef{1000, "late.py"});
  r.add(FrameDef{1000, FrameKind::Python, 1000, 0, 7, 0, 0});
  r.add(CallsiteDef{1000, 0, 1000});
  r.add(Access{k, buf, 4096, AccessMode::Write, FootprintTier::Exact});
  r.add(StackRef{k, 1000});
  r.device_sync();
  const AnalysisResult res = attributed(run);
  REQUIRE(res.findings.size() == 1);
  CHECK(res.findings[0].second.name == "writer_b");
  REQUIRE(res.findings[0].second.stack.size() == 1);
  CHECK(res.findings[0].second.stack[0].line == 7);
}

TEST_CASE("an over-synchronisation finding carries its wait's call site", "[attribution][oversync]") {
  // The reduction stream writes X, then Y; the compute stream waits for each, but nothing on it
  // touches Y afterwards: the second wait protects nothing and stalls.
  TraceBuilder run(1);
  RankTraceBuilder& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");
  const uint64_t x = r0.alloc(4096, "X"), y = r0.alloc(4096, "Y"), z = r0.alloc(4096, "Z");
  const EventId e1 = r0.event(), e2 = r0.event();
  r0.kernel(r, "write_x", {writes(x, 4096)}, 100);
  r0.record(e1, r);
  r0.wait(c, e1);
  r0.kernel(c, "read_x", {reads(x, 4096)}, 10);
  r0.kernel(r, "write_y", {writes(y, 4096)}, 100);
  r0.record(e2, r);
  r0.use_stack(r0.stack({py("/home/user/train.py", 77, "sync_grads"), py("/home/user/train.py", 10, "main")}));
  r0.wait(c, e2);
  r0.use_stack(0);
  r0.kernel(c, "read_z", {reads(z, 4096)}, 10);

  const AnalysisResult res = attributed_with_sync(run);
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.kind == streamhaz::analysis::FindingKind::OverSync);
  REQUIRE(f.sync_stack.size() == 2);
  CHECK(f.sync_stack[0].line == 77);
  CHECK_THAT(text_of(res), Catch::Contains("Synchronisation called at train.py:77 in sync_grads by rank 0"));
}

TEST_CASE("a synchronisation called through DeepSpeed's accelerator names the caller of the wrapper",
          "[attribution][oversync]") {
  // DeepSpeed's end-of-backward get_accelerator().synchronize(): the reduction stream writes Y,
  // the device is synchronised, and the compute stream then reads only Z. The synchronisation
  // protects nothing and stalls the compute stream.
  TraceBuilder run(1);
  RankTraceBuilder& r0 = run.rank(0);
  const StreamId c = r0.stream("compute"), r = r0.stream("reduction");
  const uint64_t y = r0.alloc(4096, "Y"), z = r0.alloc(4096, "Z");
  r0.kernel(r, "write_y", {writes(y, 4096)}, 100);
  r0.use_stack(r0.stack({py(std::string(kSite) + "torch/cuda/__init__.py", 892, "synchronize"),
                         py(std::string(kSite) + "deepspeed/accelerator/cuda_accelerator.py", 89,
                            "CUDA_Accelerator.synchronize"),
                         py(kStage, 1028, "DeepSpeedZeroOptimizer.independent_gradient_partition_epilogue"),
                         py("/home/user/train.py", 60, "main")}));
  r0.device_sync();
  r0.use_stack(0);
  r0.kernel(c, "read_z", {reads(z, 4096)}, 10);

  const AnalysisResult res = attributed_with_sync(run);
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.kind == streamhaz::analysis::FindingKind::OverSync);
  REQUIRE(f.sync_stack.size() == 4);
  const std::string text = text_of(res);
  CHECK_THAT(text, Catch::Contains("Synchronisation called at stage_1_and_2.py:1028 in "
                                   "DeepSpeedZeroOptimizer.independent_gradient_partition_epilogue by rank 0"));
  CHECK_THAT(text, Catch::Contains("[2 frames in torch, deepspeed.accelerator]") &&
                       !Catch::Contains("cuda_accelerator.py"));
  // --full-stacks: every frame, and the same call site named.
  const std::string full = text_of(res, true);
  CHECK_THAT(full, Catch::Contains("#1 deepspeed/accelerator/cuda_accelerator.py:89 in CUDA_Accelerator.synchronize") &&
                       Catch::Contains("Synchronisation called at stage_1_and_2.py:1028") &&
                       !Catch::Contains("frames in"));
  // JSON: the whole stack, the wrapper's frame included.
  streamhaz::report::ReportInput input;
  input.analysis = res;
  const auto j = streamhaz::report::json_report(input);
  REQUIRE(j["findings"][0]["sync"]["stack"].size() == 4);
  CHECK(j["findings"][0]["sync"]["stack"][1]["line"] == 89);
}
