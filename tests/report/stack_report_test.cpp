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

TEST_CASE("stacks: libraries' thin wrappers of torch are told apart by the table of them") {
  const char* comm = "/opt/venv/lib/python3.11/site-packages/deepspeed/comm/torch.py";
  CHECK(frame_origin(python(comm, 151, "TorchBackend.all_reduce")) == FrameOrigin::Wrapper);
  CHECK(frame_origin(python("/opt/venv/lib/python3.11/site-packages/deepspeed/comm/comm.py", 1, "all_reduce")) ==
        FrameOrigin::Wrapper);
  CHECK(frame_origin(python("/opt/venv/lib/python3.11/site-packages/deepspeed/accelerator/cuda_accelerator.py", 89,
                            "CUDA_Accelerator.synchronize")) == FrameOrigin::Wrapper);
  // Prefix-mapped paths (streamhaz run --path-prefix-map) match too: fragments match after any '/'.
  CHECK(frame_origin(python("site/deepspeed/comm/torch.py", 151, "TorchBackend.all_reduce")) == FrameOrigin::Wrapper);
  CHECK(frame_origin(python("/home/user/mydeepspeed/comm/torch.py", 1, "f")) == FrameOrigin::User);
  CHECK(frame_origin(python("/opt/venv/lib/python3.11/site-packages/deepspeed/utils/nvtx.py", 33,
                            "instrument_w_nvtx.<locals>.wrapped_fn")) == FrameOrigin::Wrapper);
  CHECK(frame_origin(python("/opt/venv/lib/python3.11/site-packages/deepspeed/utils/timer.py", 238,
                            "ThroughputTimer.start")) == FrameOrigin::Library);
  // DeepSpeed's own code stays a library frame; torch.distributed's wrappers stay torch.
  CHECK(frame_origin(python(kStage, 1028, "f")) == FrameOrigin::Library);
  CHECK(frame_origin(python("/opt/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", 83, "wrapper")) ==
        FrameOrigin::Torch);
  CHECK(fold_label(python(comm, 151, "TorchBackend.all_reduce")) == std::string("deepspeed.comm"));
  CHECK(fold_label(python("/usr/lib/python3.11/threading.py", 1, "run")) == std::string("the Python standard library"));
  CHECK(hidden_by_default(FrameOrigin::Wrapper));
}

TEST_CASE("stacks: the frame named is the caller of torch and the wrappers, which fold with torch") {
  const Stack sync = {python("/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", 892, "synchronize"),
                      python("/opt/venv/lib/python3.11/site-packages/deepspeed/accelerator/cuda_accelerator.py", 89,
                             "CUDA_Accelerator.synchronize"),
                      python(kStage, 1028, "DeepSpeedZeroOptimizer.independent_gradient_partition_epilogue"),
                      python("/home/user/train.py", 44, "main")};
  REQUIRE(innermost_user_frame(sync));
  CHECK(innermost_user_frame(sync)->line == 1028);
  const auto lines = stack_lines(sync, false);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "[2 frames in torch, deepspeed.accelerator]");
  CHECK(lines[1] == "#2 deepspeed/runtime/zero/stage_1_and_2.py:1028 in "
                    "DeepSpeedZeroOptimizer.independent_gradient_partition_epilogue");
  // Full stacks show every frame, the wrapper's included.
  const auto full = stack_lines(sync, true);
  REQUIRE(full.size() == 4);
  CHECK(full[1] == "#1 deepspeed/accelerator/cuda_accelerator.py:89 in CUDA_Accelerator.synchronize");

  SECTION("a stack of wrappers and torch only names its innermost wrapper frame") {
    const Stack wrappers = {python("/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", 2501,
                                   "all_reduce"),
                            python("site/deepspeed/comm/torch.py", 151, "TorchBackend.all_reduce"),
                            python("site/deepspeed/comm/comm.py", 520, "all_reduce")};
    REQUIRE(innermost_user_frame(wrappers));
    CHECK(innermost_user_frame(wrappers)->line == 151);
    CHECK(stack_lines(wrappers, false) == std::vector<std::string>{"[3 frames in torch, deepspeed.comm]"});
    // Torch alone names nothing, as before: reports then fall back to the innermost frame.
    CHECK_FALSE(innermost_user_frame({wrappers[0]}));
  }
  SECTION("runs of other kinds still fold apart") {
    const Stack mixed = {python("site/deepspeed/comm/torch.py", 151, "TorchBackend.all_reduce"),
                         python("/usr/lib/python3.11/contextlib.py", 81, "inner"),
                         python("/opt/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", 83, "wrapper"),
                         python("site/deepspeed/comm/comm.py", 520, "all_reduce"),
                         python("/home/user/train.py", 9, "main")};
    CHECK(stack_lines(mixed, false) == std::vector<std::string>{"[1 frame in deepspeed.comm]",
                                                                "[1 frame in the Python standard library]",
                                                                "[2 frames in torch, deepspeed.comm]",
                                                                "#4 /home/user/train.py:9 in main"});
  }
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
  // A location inside a wrapper of torch is its caller's line.
  f.first.stack = {python("/opt/venv/lib/python3.11/site-packages/deepspeed/comm/torch.py", 151, "TorchBackend.all_reduce"),
                   python("/opt/venv/lib/python3.11/site-packages/deepspeed/comm/comm.py", 520, "all_reduce"),
                   python(kStage, 1100, "average_tensor")};
  const json wrapped = sarif_report(in)["runs"][0]["results"][0]["relatedLocations"][0]["physicalLocation"];
  CHECK(wrapped["artifactLocation"]["uri"] == "deepspeed/runtime/zero/stage_1_and_2.py");
  CHECK(wrapped["region"]["startLine"] == 1100);
  f.first.stack = {python(kStage, 1100, "average_tensor")};
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
