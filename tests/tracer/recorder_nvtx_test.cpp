#include <catch2/catch.hpp>
#include <thread>

#include "record_log.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

namespace {
std::string text_of(const RecordLog& log, StringId id) {
  for (const auto& s : log.all<StringDef>())
    if (s.id == id) return s.text;
  return "";
}
}  // namespace

TEST_CASE("operations carry the innermost NVTX range path of their thread") {
  RecordLog log;
  Recorder rec(log);
  rec.nvtx_push("step");
  rec.nvtx_push("average_tensor");
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  rec.nvtx_pop();
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  rec.nvtx_pop();
  rec.nvtx_pop();  // unbalanced pop: ignored
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  auto kernels = log.all<Kernel>();
  CHECK(text_of(log, kernels[0].op.nvtx) == "step/average_tensor");
  CHECK(text_of(log, kernels[1].op.nvtx) == "step");
  CHECK(kernels[2].op.nvtx == 0);
}

TEST_CASE("ranges without readable text stay balanced but add no path segment") {
  RecordLog log;
  Recorder rec(log);
  rec.nvtx_push("");  // a library's registered-string range, pushed first and never popped
  rec.nvtx_push("step");
  rec.nvtx_push("");
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  rec.nvtx_pop();
  rec.nvtx_push("backward");
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  rec.nvtx_pop();
  rec.nvtx_pop();
  rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k"));
  auto kernels = log.all<Kernel>();
  CHECK(text_of(log, kernels[0].op.nvtx) == "step");
  CHECK(text_of(log, kernels[1].op.nvtx) == "step/backward");
  CHECK(kernels[2].op.nvtx == 0);
}

TEST_CASE("NVTX stacks are per thread") {
  RecordLog log;
  Recorder rec(log);
  rec.nvtx_push("main");
  std::thread other([&] { rec.kernel_launched(StreamRef{0, 0}, 0, testing::launch(1, "k")); });
  other.join();
  CHECK(log.all<Kernel>()[0].op.nvtx == 0);
}

TEST_CASE("stream names resolve the handle") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, 0, 0);
  rec.stream_named(StreamRef{0xa, 0}, "reduction stream");
  auto names = log.all<StreamName>();
  REQUIRE(names.size() == 1);
  CHECK(names[0].stream == 1);
  CHECK(text_of(log, names[0].name) == "reduction stream");
}
