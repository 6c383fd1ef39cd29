#pragma once
// The tracer's own cost, by phase (STREAMHAZ_SELF_PROFILE=1): each thread adds the time it
// spends in each phase to counters of its own, and the session writes the sums into the trace
// (`tracer_profile` in the header, which `streamhaz inspect` prints). There is no sampling
// profiler on the GPU machines; these counters say where a traced step's host time goes.
// Off (the default), a phase costs one relaxed load.
#include <atomic>
#include <cstdint>
#include <mutex>

#include <nlohmann/json.hpp>

namespace streamhaz::tracer {

// One row per phase: id, name in the trace, the phase it runs inside ("" for none), what it
// times. To add a phase, add a row and put a PhaseTimer where it runs.
#define STREAMHAZ_TRACER_PHASES(X)                                                                                   \
  X(DriverCallback, "driver_callback", "", "a CUPTI driver-API callback (entry or exit), whole")                    \
  X(NativeUnwind, "native_unwind", "driver_callback", "unwinding the calling thread's native frames")               \
  X(NativeUnwindSlow, "unwind_slow", "native_unwind", "libgcc's unwinder (learning frame sizes, checking)")         \
  X(ParamBytes, "param_bytes", "driver_callback", "copying a launch's argument bytes")                             \
  X(ParamLayout, "param_layout", "param_bytes", "looking up (first: asking the driver for) a kernel's parameters")  \
  X(LockWait, "lock_wait", "", "waiting for the recorder's lock")                                                  \
  X(Recorder, "recorder", "", "holding the recorder's lock (records made, stacks captured)")                       \
  X(PythonFrames, "python_frames", "recorder", "reading the Python frames")                                        \
  X(StackIntern, "stack_intern", "recorder", "interning a call stack (frames, call sites)")                         \
  X(PointerScan, "pointer_scan", "recorder", "launch arguments against the allocation index")                      \
  X(ActivityBuffer, "activity_buffer", "", "reading a CUPTI activity buffer (GPU times)")                          \
  X(ActivitySwitch, "activity_switch", "", "turning GPU times on or off (CUPTI activity enable, disable, flush)")     \
  X(Nvtx, "nvtx", "", "an NVTX range push or pop")                                                                 \
  X(Compress, "compress", "", "compressing chunks for the file")                                                   \
  X(Write, "write", "", "writing chunks to the file")

enum class Phase : uint8_t {
#define STREAMHAZ_PHASE_ID(id, name, inside, what) id,
  STREAMHAZ_TRACER_PHASES(STREAMHAZ_PHASE_ID)
#undef STREAMHAZ_PHASE_ID
};
#define STREAMHAZ_PHASE_ONE(id, name, inside, what) +1
inline constexpr size_t kPhaseCount = 0 STREAMHAZ_TRACER_PHASES(STREAMHAZ_PHASE_ONE);
#undef STREAMHAZ_PHASE_ONE

namespace self_profile_detail {
extern std::atomic<bool> enabled;
}
inline bool self_profiling() { return self_profile_detail::enabled.load(std::memory_order_relaxed); }
void enable_self_profile(bool on);
// Training steps (the step range's outermost instances): time spent inside them, from the
// third on, is also counted apart, so that set-up costs (first launches, lazy module loading,
// first unwinds) do not hide what a step pays.
inline constexpr int kProfileWarmupSteps = 2;
void profile_step_began(int index);
void profile_step_ended();
// Whether a training step after the warm-up is under way (for counters kept elsewhere).
bool profile_in_step();

uint64_t profile_clock_ns();
// Adds to the calling thread's counters (made on its first use).
void add_phase_time(Phase p, uint64_t ns);

// Times the scope it lives in, into `p`, when profiling.
class PhaseTimer {
 public:
  explicit PhaseTimer(Phase p) : phase_(p), start_(self_profiling() ? profile_clock_ns() : 0) {}
  ~PhaseTimer() {
    if (start_) add_phase_time(phase_, profile_clock_ns() - start_);
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  Phase phase_;
  uint64_t start_;
};

// A mutex held for the scope, its wait counted as LockWait and its holding as Recorder.
class TimedLock {
 public:
  explicit TimedLock(std::mutex& mu) : mu_(mu) {
    if (!self_profiling()) {
      mu_.lock();
      return;
    }
    const uint64_t t0 = profile_clock_ns();
    mu_.lock();
    since_ = profile_clock_ns();
    add_phase_time(Phase::LockWait, since_ - t0);
  }
  ~TimedLock() {
    if (since_) add_phase_time(Phase::Recorder, profile_clock_ns() - since_);
    mu_.unlock();
  }
  TimedLock(const TimedLock&) = delete;
  TimedLock& operator=(const TimedLock&) = delete;

 private:
  std::mutex& mu_;
  uint64_t since_ = 0;
};

// The counters so far: {"steps": N (those after the warm-up), "phases": [{name, inside, what, calls, ns, step_calls,
// step_ns}], "threads": [{tid, name, phases: {name: [calls, ns]}}]}. Threads that ended keep
// their counters.
nlohmann::json self_profile_json();

}  // namespace streamhaz::tracer
