// CPU micro-benchmark of the native unwinder's learned walk (tracer/glue/native_frames.cpp), the
// stack a CUDA call on a thread that runs no Python gets (PyTorch's autograd thread): a chain of
// 21 frames of four sizes, walked after `evict_mib` MiB of other work (as a real step's operator
// code pushes the tracer's tables out of the caches between two calls) and with none. Walks that
// recall their thread's recent walks (recent_walks.h) and walks that ask the frame-size table
// and the module map for every frame alternate round by round in one run.
//   tracer_unwind_bench [rounds=6] [walks_per_round=2000] [evict_mib=8]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "native_frames.h"

using namespace streamhaz::tracer;
using namespace streamhaz::tracer::glue;

namespace {

ModuleMap* modules;
volatile char sink;
double walk_ns = 0;  // summed over a round

__attribute__((noinline)) size_t leaf(RawFrame* out) {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = unwind_program_frames(*modules, out, 24);
  walk_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  sink = char(n);
  return n;
}

__attribute__((noinline)) size_t chain(int depth, RawFrame* out) {
  volatile char pad[48 + (depth % 4) * 16];
  pad[0] = char(depth);
  const size_t n = depth <= 0 ? leaf(out) : chain(depth - 1, out);
  sink = pad[0];
  return n;
}

// Median ns a walk over `rounds` rounds, recalling and asking in turn: {recalled, asked}.
// `evict` is written before each walk.
std::pair<double, double> median_walk_ns(int rounds, int walks, std::vector<char>& evict) {
  std::vector<double> recalled, asked;
  for (int r = 0; r < rounds; ++r)
    for (bool recall : {true, false}) {
      set_recent_walks(recall);
      walk_ns = 0;
      RawFrame out[24];
      for (int i = 0; i < walks; ++i) {
        if (!evict.empty()) std::memset(evict.data(), i, evict.size());
        chain(20, out);
      }
      (recall ? recalled : asked).push_back(walk_ns / walks);
    }
  std::sort(recalled.begin(), recalled.end());
  std::sort(asked.begin(), asked.end());
  return {recalled[recalled.size() / 2], asked[asked.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 6;
  const int walks = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2000;
  const size_t evict_mib = argc > 3 ? size_t(std::atoi(argv[3])) : 8;
  modules = new ModuleMap;
  modules->refresh();
  RawFrame out[24];
  set_unwind_check_period(1);
  for (int i = 0; i < 50; ++i) chain(20, out);  // the sizes learned (and checked)
  set_unwind_check_period(0);
  std::vector<char> none, evict(evict_mib << 20);
  for (auto* buffer : {&none, &evict}) {
    const auto [recalled, asked_ns] = median_walk_ns(rounds, walks, *buffer);
    std::printf("walk_%s_recalled_ns_median=%.0f walk_%s_asked_ns_median=%.0f ratio=%.2f\n",
                buffer->empty() ? "warm" : "cold", recalled, buffer->empty() ? "warm" : "cold", asked_ns,
                recalled / asked_ns);
  }
  const UnwindCounts u = unwind_counts();
  std::printf("fast=%llu slow=%llu checked=%llu differed=%llu frames_recalled=%llu frames_asked=%llu evict_mib=%zu\n",
              (unsigned long long)u.fast, (unsigned long long)u.slow, (unsigned long long)u.checked,
              (unsigned long long)u.differed, (unsigned long long)u.frames_recalled,
              (unsigned long long)u.frames_asked, evict_mib);
  return u.differed == 0 ? 0 : 1;
}
