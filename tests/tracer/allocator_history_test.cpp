// PyTorch's allocator history in the tracer: the call clock that places Unix-stamped events
// among the calls, the text the Python side hands over, and the TensorAlloc records made of it.
#include <catch2/catch.hpp>

#include <string>

#include "record_log.h"
#include "streamhaz/tracer/allocator_history.h"
#include "streamhaz/tracer/call_clock.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

namespace {

// The stack the Python side took for an allocation never reads the thread: it comes named.
struct NoStacks : StackSource {
  size_t capture(StackNeed, RawFrame*, size_t) override { return 0; }
  PythonFrameInfo describe_python(const RawFrame&) override { return {}; }
  std::optional<ModuleInfo> module_of(uint64_t) override { return std::nullopt; }
};

std::string text_of(const RecordLog& log, StringId id) {
  for (const auto& s : log.all<StringDef>())
    if (s.id == id) return s.text;
  return "";
}

}  // namespace

TEST_CASE("the call clock places an event before the first call made at or after it") {
  CallClock clock;
  clock.on_call(1, 100);
  clock.on_call(2, 100);  // same microsecond: no new sample
  clock.on_call(3, 105);
  clock.on_call(4, 103);  // a clock stepped back reads as standing still
  clock.on_call(5, 110);
  CHECK(clock.samples() == 3);
  CHECK(clock.first_call_at_or_after(50) == 1);
  CHECK(clock.first_call_at_or_after(100) == 1);  // the call of the same microsecond comes after
  CHECK(clock.first_call_at_or_after(101) == 3);
  CHECK(clock.first_call_at_or_after(106) == 5);
  CHECK(clock.first_call_at_or_after(111) == 6);  // after every call
}

TEST_CASE("a full call clock keeps its newest samples and cannot place what is older") {
  CallClock clock(4);
  for (uint64_t seq = 1; seq <= 6; ++seq) clock.on_call(seq, seq * 10);
  CHECK(clock.dropped_any());
  CHECK(clock.samples() <= 4);
  CHECK(clock.first_call_at_or_after(5) == 0);  // older than anything kept
  CHECK(clock.first_call_at_or_after(55) == 6);
}

TEST_CASE("the Python side's history text is read whole or not at all") {
  const std::string good = std::string(kAllocatorHistoryMagic) +
                           "\nalloc 0 140000 4096 0 1700000000000001\n"
                           "frame\t72\tmain\t/home/user/train.py\nframe\t131\t<module>\t/home/user/train.py\n"
                           "alloc 1 150000 512 93000 1700000000000009\n";
  auto parsed = parse_allocator_history(good);
  REQUIRE(std::holds_alternative<std::vector<HistoryAllocation>>(parsed));
  const auto& allocs = std::get<std::vector<HistoryAllocation>>(parsed);
  REQUIRE(allocs.size() == 2);
  CHECK(allocs[0].ptr == 140000);
  CHECK(allocs[0].unix_us == 1700000000000001ull);
  REQUIRE(allocs[0].frames.size() == 2);
  CHECK(allocs[0].frames[0].line == 72);
  CHECK(allocs[0].frames[0].function == "main");
  CHECK(allocs[0].frames[1].file == "/home/user/train.py");
  CHECK(allocs[1].device == 1);
  CHECK(allocs[1].stream == 93000);
  CHECK(allocs[1].frames.empty());

  auto why = [](const std::string& text) {
    auto p = parse_allocator_history(text);
    REQUIRE(std::holds_alternative<std::string>(p));
    return std::get<std::string>(p);
  };
  CHECK_THAT(why("streamhaz-allocator-history 2\n"), Catch::Contains("line 1"));
  CHECK_THAT(why(std::string(kAllocatorHistoryMagic) + "\nalloc 0 1 2 3\n"), Catch::Contains("line 2"));
  CHECK_THAT(why(std::string(kAllocatorHistoryMagic) + "\nframe\t1\tf\tx.py\n"), Catch::Contains("before any alloc"));
  CHECK_THAT(why(std::string(kAllocatorHistoryMagic) + "\nalloc 0 1 2 3 4\nframe\tx\tf\tx.py\n"),
             Catch::Contains("line 3"));
  CHECK_THAT(why(""), Catch::Contains("empty"));
}

TEST_CASE("each allocation of the history becomes a TensorAlloc placed among the calls, with its stack") {
  RecordLog log;
  Recorder rec(log);
  NoStacks src;
  rec.set_stack_source(&src);
  rec.enable_call_clock();
  rec.allocated(AllocKind::Device, 0x7000, 1 << 20, 0);
  // Calls of the same microsecond would place the allocation before them: `between` is a
  // microsecond after the cudaMalloc's and before the launch's.
  const uint64_t after_alloc = unix_time_us();
  while (unix_time_us() == after_alloc) {
  }
  const uint64_t between = unix_time_us();
  while (unix_time_us() == between) {
  }
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  const uint64_t kernel_seq = log.all<Kernel>().at(0).op.seq;

  std::vector<HistoryAllocation> history(3);
  history[0] = {0, 0x7000, 4096, 0, between, {{"/w/train.py", "main", 72}, {"/w/train.py", "<module>", 131}}};
  history[1] = {0, 0x8000, 4096, 0, 1, {{"/w/train.py", "main", 72}, {"/w/train.py", "<module>", 131}}};
  history[2] = {0, 0x9000, 256, 0, unix_time_us() + 1000000, {}};
  CHECK(rec.allocator_history(history) == 3);

  const auto tensors = log.all<TensorAlloc>();
  REQUIRE(tensors.size() == 3);
  // Between the cudaMalloc and the launch (whose stream's creation is the next call).
  CHECK(tensors[0].before_seq == log.all<Alloc>().at(0).seq + 1);
  CHECK(tensors[1].before_seq == 1);                // older than every call: before the first
  CHECK(tensors[2].before_seq == kernel_seq + 1);   // after every call
  CHECK(tensors[0].ptr == 0x7000);
  CHECK(tensors[0].bytes == 4096);
  // One call site for the two equal stacks, innermost frame at line 72.
  CHECK(tensors[0].callsite == tensors[1].callsite);
  CHECK(tensors[2].callsite == 0);
  const auto sites = log.all<CallsiteDef>();
  const auto frames = log.all<FrameDef>();
  REQUIRE(sites.size() == 2);
  const CallsiteDef& inner = sites.back();
  CHECK(inner.id == tensors[0].callsite);
  const FrameDef& f = *std::find_if(frames.begin(), frames.end(), [&](const FrameDef& d) { return d.id == inner.frame; });
  CHECK(f.line == 72);
  CHECK(text_of(log, f.function) == "main");
  // Then what was recorded, for check to read.
  const auto metas = log.all<Meta>();
  REQUIRE(!metas.empty());
  CHECK_THAT(metas.back().json, Catch::Contains("\"status\":\"recorded\"") && Catch::Contains("\"allocations\":3"));
}

TEST_CASE("a history that could not be had leaves its reason in the trace") {
  RecordLog log;
  Recorder rec(log);
  rec.allocator_history_unavailable("not supported by cudaMallocAsync");
  const auto metas = log.all<Meta>();
  REQUIRE(metas.size() == 1);
  CHECK_THAT(metas[0].json, Catch::Contains("\"unavailable\"") && Catch::Contains("cudaMallocAsync"));
}
