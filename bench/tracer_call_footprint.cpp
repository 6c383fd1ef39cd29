// What one traced call's recorder path touches: run under valgrind's lackey by
// bench/call_footprint.sh, which counts per call the instructions, and the distinct 64-byte lines
// and 4 KiB pages of code and of data. Between two calls a training step's own work evicts the
// tracer from the caches and its pages from the TLB, so on a real step a call pays per line and
// page it touches; the lent GPU machines are virtual and give perf no cache or TLB events, so
// this count is how a change is judged before it meets a real step.
// Each kind of call runs warm first (names interned, tables grown), then kCalls more times, each
// between two stores to `call_marker`, whose address the program prints first.
//   tracer_call_footprint   (under: valgrind --tool=lackey --trace-mem=yes)
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "streamhaz/tracer/session.h"

using namespace streamhaz::tracer;
namespace fs = std::filesystem;

namespace {

volatile uint64_t call_marker;
[[gnu::noinline]] void mark(uint64_t kind) { call_marker = kind; }

constexpr int kWarm = 300, kCalls = 5;
constexpr uint64_t kStream = 0x55d0c0ffee00, kEvent = 0x55d0c0ffef00, kHeap = 0x7f0000000000, kSegment = 2 << 20;

// A Python stack of 12 frames, the same every call, as a training loop's launch has.
struct TwelveFrames : StackSource {
  size_t capture(StackNeed, RawFrame* out, size_t max) override {
    const size_t n = std::min<size_t>(12, max);
    for (size_t i = 0; i < n; ++i) out[i] = RawFrame{streamhaz::trace::FrameKind::Python, 0x7e0000001000 + 64 * i, int64_t(2 * i), 1};
    return n;
  }
  PythonFrameInfo describe_python(const RawFrame& f) override {
    return {"train.py", "layer" + std::to_string(f.key & 0xfff), static_cast<uint32_t>(f.detail)};
  }
  std::optional<ModuleInfo> module_of(uint64_t) override { return std::nullopt; }
};

}  // namespace

int main() {
  const fs::path dir = fs::temp_directory_path() / ("streamhaz-call-footprint-" + std::to_string(getpid()));
  const ProcessIdentity who{.rank = 0, .world_size = 1, .pid = getpid(), .host = "bench", .command = {}};
  SessionOptions options;
  options.out_dir = dir.string();
  options.flush_period = std::chrono::milliseconds(0);  // no flusher thread: one thread's accesses
  std::printf("marker %p\n", static_cast<void*>(const_cast<uint64_t*>(&call_marker)));
  std::fflush(stdout);
  {
    Session session(options, who, [&] { return base_header(who, "pointer"); });
    Recorder& rec = session.recorder();
    TwelveFrames stacks;
    rec.stream_created(kStream, 0, 1, 0);
    rec.event_created(kEvent, 2);
    for (uint64_t i = 0; i < 256; ++i) rec.allocated(streamhaz::trace::AllocKind::Device, kHeap + i * kSegment, kSegment, 0);
    const StreamRef s{kStream, 0, false};
    // An elementwise launch: element count, functor scalar, three operand pointers.
    std::string params(40, '\0');
    for (uint64_t i = 0; i < 3; ++i) {
      const uint64_t ptr = kHeap + i * kSegment + 8192;
      std::memcpy(params.data() + 16 + i * 8, &ptr, 8);
    }
    const std::vector<std::pair<size_t, size_t>> layout = {{0, 8}, {8, 8}, {16, 24}};
    KernelLaunch k;
    k.name = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
    k.params = params;
    k.layout = &layout;
    uint64_t corr = 100;
    auto run = [&](uint64_t kind, auto&& call) {
      for (int i = 0; i < kWarm + kCalls; ++i) {
        k.function = 0x7f3a12345600 + 64 * (i % 50);  // 50 kernels, as a step launches
        if (i >= kWarm) mark(kind);
        call();
        if (i >= kWarm) mark(0);
        rec.activity(corr, corr * 1000, corr * 1000 + 1500);
      }
    };
    // The kinds, in the order call_footprint.py names them.
    run(1, [&] { rec.kernel_launched(s, corr += 2, k); });
    rec.set_kernel_arguments(KernelArguments::Pointers);
    run(2, [&] { rec.kernel_launched(s, corr += 2, k); });
    run(3, [&] { rec.event_recorded(kEvent, s); });
    rec.set_stack_source(&stacks);
    run(4, [&] { rec.kernel_launched(s, corr += 2, k); });
    session.close();
  }
  fs::remove_all(dir);
  return 0;
}
