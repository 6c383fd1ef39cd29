// How reports show stacks: frame origins and folding, NVTX paths, SARIF source locations, stacks
// and code flows, and stacks in the HTML page escaped.
#include <catch2/catch.hpp>

#include <sstream>

#include "sample_findings.h"
#include "streamhaz/report/html_report.h"
#include "streamhaz/report/json_report.h"
#include "streamhaz/report/sarif_report.h"
#include "streamhaz/report/stack_text.h"

using namespace streamhaz;
using namespace streamhaz::report;
using analysis::Stack;
using analysis::StackFrame;
using trace::FrameKind;
using json = nlohmann::ordered_json;

namespace {

StackFrame python(std::string file, uint32_t line, std::string function) {
  return {FrameKind::Python, std::move(file), line, std::move(function), {}, 0};
}
StackFrame native(std::string module, uint64_t offset, std::string function = {}) {
  return {FrameKind::Native, {}, 0, std::move(function), std::move(module), offset};
}

const char* kStage = "/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/zero/stage_1_and_2.py";

Stack copy_stack() {
  return {native("/opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so", 0x42),
          python("/opt/venv/lib/python3.11/site-packages/torch/_tensor.py", 9, "copy_"),
          python("/usr/lib/python3.11/contextlib.py", 81, "inner"),
          python(kStage, 912, "copy_grads_in_partition"),
          python("/home/user/train.py", 44, "main")};
}

}  // namespace

TEST_CASE("stacks: frames are told apart by where their code lives") {
  CHECK(frame_origin(python("/home/user/train.py", 1, "main")) == FrameOrigin::User);
  CHECK(frame_origin(python(kStage, 1, "f")) == FrameOrigin::Library);
  CHECK(frame_origin(python("/opt/venv/lib/python3.11/site-packages/torch/_tensor.py", 1, "f")) == FrameOrigin::Torch);
  CHECK(frame_origin(python("/usr/lib/python3.11/threading.py", 1, "run")) == FrameOrigin::PythonStdlib);
  CHECK(frame_origin(python("<frozen runpy>", 1, "_run_code")) == FrameOrigin::PythonStdlib);
  CHECK(frame_origin(native("/usr/lib/libtorch_cuda.so", 1)) == FrameOrigin::Torch);
  CHECK(frame_origin(native("/usr/local/cuda/lib64/libcudart.so.12", 1)) == FrameOrigin::System);
  CHECK(frame_origin(native("/home/user/build/streamhaz-reducer", 1)) == FrameOrigin::User);
  CHECK(short_path(kStage) == "deepspeed/runtime/zero/stage_1_and_2.py");
  CHECK(short_path("/home/user/train.py") == "/home/user/train.py");
}

TEST_CASE("stacks: library internals fold into one line per run, user and library frames show") {
  const auto lines = stack_lines(copy_stack(), false);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "[2 frames in torch]");
  CHECK(lines[1] == "[1 frame in the Python standard library]");
  CHECK(lines[2] == "#3 deepspeed/runtime/zero/stage_1_and_2.py:912 in copy_grads_in_partition");
  CHECK(lines[3] == "#4 /home/user/train.py:44 in main");
  const auto full = stack_lines(copy_stack(), true);
  REQUIRE(full.size() == 5);
  CHECK(full[0] == "#0 libc10_cuda.so+0x42");
  CHECK(full[1] == "#1 torch/_tensor.py:9 in copy_");
  // Deep user stacks are cut after max_shown frames.
  Stack deep(20, python("/home/user/train.py", 5, "f"));
  const auto cut = stack_lines(deep, false, 3);
  REQUIRE(cut.size() == 4);
  CHECK(cut[3] == "[17 more frames]");
  REQUIRE(innermost_user_frame(copy_stack()));
  CHECK(innermost_user_frame(copy_stack())->line == 912);
}

TEST_CASE("stacks: symbolised native frames show their source, others their module and offset") {
  StackFrame f = native("/usr/bin/streamhaz-reducer", 0x1a2b, "launch_reduce(float*)");
  f.file = "reducer/src/step.cu";
  f.line = 88;
  CHECK(frame_text(f) == "reducer/src/step.cu:88 in launch_reduce(float*) (streamhaz-reducer+0x1a2b)");
  CHECK(frame_brief(f) == "step.cu:88 in launch_reduce(float*)");
  CHECK(frame_text(native("/usr/lib/libfoo.so", 0x10)) == "libfoo.so+0x10");
}

TEST_CASE("stacks: NVTX paths drop older tracers' ? segments") {
  CHECK(nvtx_path("?/step/backward") == "step/backward");
  CHECK(nvtx_path("step/?/backward") == "step/backward");
  CHECK(nvtx_path("?") == "");
  CHECK(nvtx_path("step/backward") == "step/backward");
  CHECK(nvtx_path("") == "");
  CHECK(nvtx_path("a?/b") == "a?/b");  // only whole "?" segments
}

TEST_CASE("sarif: with stacks, locations are the program's lines and every stack is carried") {
  ReportInput in = testing::sample_input();
  analysis::Finding& f = in.analysis.findings[0];
  f.second.stack = copy_stack();
  f.first.stack = {python(kStage, 1100, "average_tensor")};
  f.buffer.alloc_stack = {python(kStage, 130, "__init__")};
  in.source_root = "/opt/venv/lib/python3.11/site-packages/";
  const json r = sarif_report(in)["runs"][0]["results"][0];
  const json& loc = r["locations"][0]["physicalLocation"];
  CHECK(loc["artifactLocation"]["uri"] == "deepspeed/runtime/zero/stage_1_and_2.py");
  CHECK(loc["region"]["startLine"] == 912);
  CHECK(r["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 1100);
  REQUIRE(r["stacks"].size() == 3);
  CHECK(r["stacks"][0]["frames"].size() == 5);
  CHECK(r["stacks"][0]["frames"][0]["module"] == "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so");
  CHECK(r["stacks"][0]["frames"][4]["location"]["physicalLocation"]["artifactLocation"]["uri"] ==
        "file:///home/user/train.py");
  REQUIRE(r["codeFlows"].is_array());
  const json& flows = r["codeFlows"][0]["threadFlows"];
  REQUIRE(flows.size() == 3);
  // Outermost call first, as it executed.
  CHECK(flows[0]["locations"][0]["location"]["physicalLocation"]["region"]["startLine"] == 44);
  // The fingerprint is the key: stacks do not change it.
  CHECK(r["partialFingerprints"]["streamhazFindingKey/v1"] == f.key);
  // Without stacks the trace file stays the location.
  const json plain = sarif_report(testing::sample_input())["runs"][0]["results"][0];
  CHECK(plain["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "traces/zero2%20run/rank0.shz");
  CHECK_FALSE(plain.contains("stacks"));
}

TEST_CASE("json: an over-synchronisation carries its call's stack") {
  ReportInput in = testing::sample_input();
  analysis::Finding& f = in.analysis.findings[1];
  f.sync_rank = 1;
  f.sync_seq = 68;
  f.sync_stack = {python("/home/user/train.py", 77, "step")};
  const json j = json_report(in);
  CHECK(j["findings"][1]["sync"]["seq"] == 68);
  CHECK(j["findings"][1]["sync"]["stack"][0]["line"] == 77);
  CHECK_FALSE(j["findings"][0].contains("sync"));
  CHECK(j["findings"][0]["second"]["stack"].empty());
}

TEST_CASE("html: a finding card shows both stacks, trace-given names escaped") {
  ReportInput in = testing::sample_input();
  in.analysis.findings[0].second.stack = {python("/home/user/evil.py", 3, "<script>alert(1)</script>"),
                                          python("/home/user/train.py", 44, "main")};
  in.analysis.findings[0].first.stack = {python(kStage, 1100, "average_tensor")};
  in.analysis.findings[0].first.nvtx = "?/step/average_tensor";
  std::ostringstream out;
  write_html_report(out, in, Timeline{});
  const std::string page = out.str();
  CHECK_THAT(page, Catch::Contains("Stack, issued later") && Catch::Contains("Stack, issued first") &&
                       Catch::Contains("#1 /home/user/train.py:44 in main") &&
                       Catch::Contains("deepspeed/runtime/zero/stage_1_and_2.py:1100 in average_tensor") &&
                       Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK_THAT(page, !Catch::Contains("<script>alert(1)"));
  CHECK_THAT(page, Catch::Contains("<td>step/average_tensor</td>") && !Catch::Contains("?/step"));
}
