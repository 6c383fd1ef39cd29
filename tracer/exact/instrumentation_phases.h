// When the exact tier instruments at all.
//
// Instrumentation costs every kernel of a patched module, even a launch that passes no table:
// the patch is called before each global access all the same (an empty patch alone made a copy
// kernel 17.5x slower on an H200). A training loop launches the same kernels with the same
// tensors every step, so the launch memo (launch_memo.h) soon knows most launches. Hence two
// phases per CUDA context (one GPU of the process), switched by window counts (phase_switch.h):
//   - learn: every program module of the context is patched; a launch the memo does not know is
//     instrumented, and what it touched is taught to the memo;
//   - steady: the context's patches are off. A launch the memo does not know runs bare: its
//     pointer arguments still enter the check, as the pointer tier.
// The Sanitizer's launch callbacks are on while any context learns.
//
// A switch happens at the exit of one of the program's own launches on that context (never
// inside an NCCL call, never while a stream capture is open). It closes the context's gate (each
// program launch holds it shared from the entry of its launch call to the exit), drains the
// context's streams, then patches or unpatches: no kernel the program launched directly on the
// context runs or is being launched while module code changes (a CUDA graph launched from
// another thread in that moment is not held back). No lock another GPU's launch needs is held
// meanwhile: a drained collective may wait for it.
#pragma once

#include <cuda.h>
#include <sanitizer.h>

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <set>
#include <string>
#include <vector>

#include "sanitizer_api.h"
#include "streamhaz/tracer/phase_switch.h"

namespace streamhaz::tracer::glue {

class InstrumentationPhases {
 public:
  // `switching`: false keeps the learn phase for good (every launch instrumented).
  InstrumentationPhases(const SanitizerApi& api, Sanitizer_SubscriberHandle subscriber, std::string patch_file,
                        bool switching)
      : api_(api), subscriber_(subscriber), patch_file_(std::move(patch_file)), switching_(switching) {}

  // A module was loaded: patched if its context learns, unless it is NCCL's. Returns a warning.
  std::string loaded(CUcontext context, CUmodule module, const char* image, size_t bytes);
  void unloading(CUmodule module);
  bool learning(CUcontext context);
  bool patched(CUmodule module);
  // A program launch call on `context` enters and leaves (a phase switch waits for it).
  void enter_launch(CUcontext context);
  void leave_launch(CUcontext context);
  // Each program launch on `context`: whether the memo served it.
  void launched(CUcontext context, bool served_by_memo);
  // Whether `context`'s last window asked for the other phase.
  bool due(CUcontext context);
  void context_created(CUcontext context);
  void context_destroyed(CUcontext context);
  void stream_created(CUcontext context, Sanitizer_StreamHandle stream);
  void stream_destroyed(Sanitizer_StreamHandle stream);
  // Switches `context` when due. The caller is outside launch callbacks, NCCL calls and its own
  // launch's gate.
  void switch_if_due(CUcontext context);

  struct Counts {
    uint64_t to_steady = 0, to_learn = 0;
  };
  Counts counts();

 private:
  struct Context {
    PhaseSwitch phase;
    bool due = false;
    std::set<Sanitizer_StreamHandle> streams;
  };
  struct Module {
    CUcontext context = nullptr;
    bool patched = false;
  };
  bool patch(CUmodule module);  // patch_mu_ held
  std::shared_mutex& gate(CUcontext context);
  void set_launch_callbacks();  // mu_ held: on while any context learns

  const SanitizerApi& api_;
  const Sanitizer_SubscriberHandle subscriber_;
  const std::string patch_file_;
  const bool switching_;
  // The Sanitizer's patching calls must not run concurrently, and may call back into resource
  // callbacks on the same thread: a re-entrant lock of their own, taken before mu_.
  std::recursive_mutex patch_mu_;
  std::recursive_mutex mu_;  // the maps below; never held while streams drain
  std::set<CUcontext> contexts_with_patches_;
  std::map<CUcontext, Context> contexts_;
  std::map<CUmodule, Module> modules_;  // the program's modules (not NCCL's)
  // Kept for the life of the process: a thread may still hold one while its context goes.
  std::map<CUcontext, std::unique_ptr<std::shared_mutex>> gates_;
  bool launch_callbacks_ = true;
  Counts counts_;
};

}  // namespace streamhaz::tracer::glue
