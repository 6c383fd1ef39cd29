// Writes and reads a synthetic ZeRO-2-like trace of N operations (default 10 million) and
// prints the on-disk bytes per operation and the read rate. With `stacks`, every call carries
// a call stack as a traced PyTorch process's would (30 Python frames and a native one, one
// call site per layer and operation kind). Usage:
//   format_bench [OPERATIONS] [TEMP_DIR] [stacks]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"

using namespace streamhaz::trace;

namespace {

// One rank of an overlapped ZeRO-2 backward: per layer a GEMM, a gradient kernel and a copy
// into the IPG bucket on the compute stream; every few layers a flush on the reduction stream.
uint64_t write_zero2_rank(const std::string& path, int rank, uint64_t target_ops, bool stacks) {
  RankTraceBuilder r(rank, 2, path);
  // The stack of one call: the training loop's outer frames, a per-layer module frame, the call site.
  const ModuleId torch_cuda = r.module("/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
                                       0x7f2000000000, 0x4000000, "0123456789abcdef0123456789abcdef01234567");
  auto stack_of = [&](int layer, const char* call, uint32_t line) -> CallsiteId {
    if (!stacks) return 0;
    std::vector<BuilderFrame> frames = {
        native(torch_cuda, 0x10000 + line), py("deepspeed/runtime/zero/stage_1_and_2.py", line, call),
        py("torch/nn/modules/module.py", 1500 + static_cast<uint32_t>(layer), "_call_impl")};
    for (uint32_t depth = 0; depth < 28; ++depth) frames.push_back(py("train.py", 100 + depth, "frame"));
    return r.stack(frames);
  };
  auto at = [&](int layer, const char* call, uint32_t line) {
    if (stacks) r.use_stack(stack_of(layer, call, line));
  };
  StreamId compute = r.stream("compute stream", false);
  StreamId reduction = r.stream("reduction stream");
  constexpr int kLayers = 24, kLayersPerBucket = 4;
  constexpr uint64_t kGradBytes = 4 << 20;
  uint64_t ipg[2] = {r.alloc(kGradBytes * kLayersPerBucket, "ipg_buffer[0]"),
                     r.alloc(kGradBytes * kLayersPerBucket, "ipg_buffer[1]")};
  uint64_t grads = r.alloc(kGradBytes * kLayers, "grads");
  uint64_t partition = r.alloc(kGradBytes * kLayers / 2, "grad_partition");
  EventId ready[2] = {r.event(), r.event()}, done[2] = {r.event(), r.event()};
  int index = 0, in_bucket = 0;
  while (r.operations() < target_ops) {
    r.push_range("backward");
    for (int layer = kLayers - 1; layer >= 0; --layer) {
      uint64_t grad = grads + layer * kGradBytes;
      at(layer, "gemm", 10);
      r.kernel(compute, "sm90_xmma_gemm_bf16bf16_bf16f32", {}, 120);
      at(layer, "grad", 20);
      r.kernel(compute, "_Z10layer_gradPfmi", {writes(grad, kGradBytes)}, 15);
      at(layer, "wait", 30);
      r.wait(compute, done[index]);
      at(layer, "copy_grads_in_partition", 912);
      r.memcpy(compute, ipg[index] + in_bucket * kGradBytes, grad, kGradBytes, MemcpyKind::DeviceToDevice, 8);
      if (++in_bucket == kLayersPerBucket) {
        at(0, "average_tensor", 1100);
        r.record(ready[index], compute);
        r.push_range("average_tensor");
        r.wait(reduction, ready[index]);
        r.kernel(reduction, "_Z9predividePffm", {reads_writes(ipg[index], kGradBytes * kLayersPerBucket)}, 10);
        r.all_reduce(reduction, ipg[index], ipg[index], kGradBytes * kLayersPerBucket / 4, TraceBuilder::comm(0), 300);
        r.memcpy(reduction, partition, ipg[index], kGradBytes * kLayersPerBucket / 2, MemcpyKind::DeviceToDevice, 8);
        r.record(done[index], reduction);
        r.pop_range();
        index ^= 1;
        in_bucket = 0;
      }
    }
    r.pop_range();
    r.stream_sync(reduction);
  }
  r.close();
  return r.operations();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t ops = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  std::string path = (dir / ("streamhaz-format-bench-" + std::to_string(getpid()) + ".shz")).string();

  auto t0 = std::chrono::steady_clock::now();
  const bool stacks = argc > 3 && std::string(argv[3]) == "stacks";
  uint64_t written = write_zero2_rank(path, 0, ops, stacks);
  double write_s = seconds_since(t0);
  uint64_t bytes = std::filesystem::file_size(path);

  t0 = std::chrono::steady_clock::now();
  TraceReader reader(path);
  Record r;
  uint64_t records = 0;
  while (reader.next(r)) ++records;
  double read_s = seconds_since(t0);
  std::filesystem::remove(path);

  std::printf("format_bench: %llu operations, %llu records (operations, timings, footprints, events%s)\n",
              static_cast<unsigned long long>(written), static_cast<unsigned long long>(records),
              stacks ? ", call stacks" : "");
  std::printf("  file size          %.1f MiB\n", bytes / 1048576.0);
  std::printf("  bytes per operation %.2f   (target < 48)\n", double(bytes) / double(written));
  std::printf("  write               %.2f M operations/s\n", written / write_s / 1e6);
  std::printf("  read                %.2f M records/s, %.2f M operations/s\n", records / read_s / 1e6,
              written / read_s / 1e6);
  return double(bytes) / double(written) < 48 ? 0 : 1;
}
