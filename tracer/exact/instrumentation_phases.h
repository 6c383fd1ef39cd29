// When the exact tier instruments at all.
//
// Instrumentation costs every kernel of a patched module, even a launch that passes no table:
// the patch is called before each global access all the same (an empty patch alone made a copy
// kernel 17.5x slower on an H200). A training loop launches the same kernels with the same
// tensors every step, so the launch memo (launch_memo.h) soon knows most launches. Hence two
// phases, switched by window counts (phase_switch.h):
//   - learn: every program module is patched and the launch callbacks are on; a launch the memo
//     does not know is instrumented, and what it touched is taught to the memo;
//   - steady: the patches are off and the launch callbacks stop. A launch the memo does not know
//     runs bare: its pointer arguments still enter the check, as the pointer tier.
// Switching happens outside launch callbacks, after every stream of the program was drained, so
// that no kernel of a module runs while its code changes.
#pragma once

#include <cuda.h>
#include <sanitizer.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "sanitizer_api.h"
#include "streamhaz/tracer/phase_switch.h"

namespace streamhaz::tracer::glue {

class InstrumentationPhases {
 public:
  // `switching`: false keeps the learn phase for good (every launch instrumented).
  InstrumentationPhases(const SanitizerApi& api, Sanitizer_SubscriberHandle subscriber, std::string patch_file,
                        bool switching)
      : api_(api), subscriber_(subscriber), patch_file_(std::move(patch_file)), switching_(switching) {}

  // A module was loaded: patched in the learn phase unless it is NCCL's. Returns a warning.
  std::string loaded(CUcontext context, CUmodule module, const char* image, size_t bytes);
  bool learning() const { return learning_.load(std::memory_order_acquire); }
  bool patched(CUmodule module);
  // Each program launch: whether the memo served it.
  void launched(bool served_by_memo);
  void context_created(CUcontext context);
  void stream_created(Sanitizer_StreamHandle stream);
  void stream_destroyed(Sanitizer_StreamHandle stream);
  // Whether a window asked for the other phase; read unlocked at every launch's exit.
  bool due() const { return due_.load(std::memory_order_relaxed); }
  // Outside launch callbacks, with no instrumented launch in flight: switches phase when due.
  void maintain();

  struct Counts {
    uint64_t to_steady = 0, to_learn = 0;
  };
  Counts counts();

 private:
  bool patch(CUmodule module);
  void drain_streams();
  void enter_steady();
  void enter_learn();

  const SanitizerApi& api_;
  const Sanitizer_SubscriberHandle subscriber_;
  const std::string patch_file_;
  const bool switching_;
  // Patching may call back into resource callbacks on this thread: the lock is re-entrant.
  std::recursive_mutex mu_;
  std::set<CUcontext> contexts_with_patches_;
  std::map<CUmodule, bool> modules_;  // the program's modules (not NCCL's) -> patched
  std::set<Sanitizer_StreamHandle> streams_;
  std::atomic<bool> learning_{true};
  std::atomic<bool> due_{false};
  PhaseSwitch switch_;
  Counts counts_;
};

}  // namespace streamhaz::tracer::glue
