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

TEST_CASE("each push and pop of a readable range is a RangeEdge; the outermost step range is counted") {
  RecordLog log;
  Recorder rec(log);
  rec.set_step_range("step");
  std::vector<int> pushed;
  std::vector<bool> popped;
  for (int i = 0; i < 3; ++i) {
    pushed.push_back(rec.nvtx_push("step"));
    pushed.push_back(rec.nvtx_push("step"));  // a framework's own "step" inside: not a step
    pushed.push_back(rec.nvtx_push(""));      // no text: no edge
    popped.push_back(rec.nvtx_pop());
    popped.push_back(rec.nvtx_pop());
    popped.push_back(rec.nvtx_pop());
  }
  CHECK(pushed == std::vector<int>{0, -1, -1, 1, -1, -1, 2, -1, -1});
  CHECK(popped == std::vector<bool>{false, false, true, false, false, true, false, false, true});
  const auto edges = log.all<RangeEdge>();
  REQUIRE(edges.size() == 12);  // two readable ranges pushed and popped per step
  CHECK(text_of(log, edges[0].path) == "step");
  CHECK(text_of(log, edges[1].path) == "step/step");
  CHECK(edges[0].push);
  CHECK_FALSE(edges[2].push);
  CHECK(text_of(log, edges[2].path) == "step/step");
  for (size_t i = 1; i < edges.size(); ++i) CHECK(edges[i].seq > edges[i - 1].seq);
}

TEST_CASE("without a step range nothing is counted as a step") {
  RecordLog log;
  Recorder rec(log);
  CHECK(rec.nvtx_push("step") == -1);
  CHECK_FALSE(rec.nvtx_pop());
  CHECK(log.all<RangeEdge>().size() == 2);
}
