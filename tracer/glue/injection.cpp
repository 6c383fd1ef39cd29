// Entry point through CUDA_INJECTION64_PATH: the driver calls InitializeInjection() at its
// first use in the process. Subscribes to CUPTI, installs the exit, signal and fork hooks.
// Any failure leaves the program running untraced, with one line on stderr.
#include <cupti.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "activity.h"
#include "callbacks.h"
#include "driver_wrappers.h"
#include "exact_backend.h"
#include "native_frames.h"
#include "tracer_state.h"
#include "wrapper_audit.h"

namespace streamhaz::tracer::glue {

namespace {

struct sigaction previous_term, previous_int;

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  TracerState& s = state();
  if (s.recording.load() || s.paused.load()) s.session->flush_from_signal();
  const struct sigaction& prev = sig == SIGTERM ? previous_term : previous_int;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, context);
    return;
  }
  if (prev.sa_handler == SIG_IGN) return;
  if (prev.sa_handler == SIG_DFL) {
    // Die as the program would have: restore the default and re-raise.
    sigaction(sig, &prev, nullptr);
    raise(sig);
    return;
  }
  prev.sa_handler(sig);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &previous_term);
  sigaction(SIGINT, &sa, &previous_int);
}

void on_fork_child() {
  // The child shares the parent's file: it must never write to it.
  TracerState& s = state();
  s.recording.store(false);
  s.paused.store(false);
  s.given_up.store(true);
  if (s.session) s.session->forget_after_fork();
}

void on_exit() {
  TracerState& s = state();
  if (!s.recording.load() && !s.paused.load()) return;
  s.paused.store(false);
  stop_wrapper_audits();  // while recording: it may still say which calls went around the wrappers
  if (s.footprints != Footprints::Exact) {  // exact mode never subscribed CUPTI
    stop_activity_sampler();
    flush_activity();  // the timings still in CUPTI's buffers
  } else if (std::string summary = exact_backend_summary(); !summary.empty()) {
    warn(summary);
  }
  if (self_profiling()) {
    const UnwindCounts u = unwind_counts();
    s.session->recorder().meta(nlohmann::json{{"native_unwinds", {{"fast", u.fast}, {"slow", u.slow}, {"checked", u.checked},
                                                                  {"differed", u.differed}, {"sizes_learned", u.sizes_learned},
                                                                  {"truncated", u.truncated}, {"through_varying", u.through_varying},
                                                                  {"frames_recalled", u.frames_recalled}, {"frames_asked", u.frames_asked},
                                                                  {"failed", {{"plumbing_unknown", u.failed_plumbing_unknown},
                                                                              {"plumbing_varies", u.failed_plumbing_varies},
                                                                              {"unknown", u.failed_unknown},
                                                                              {"varies", u.failed_varies},
                                                                              {"off_stack", u.failed_off_stack}}}}}}
                                   .dump());
    s.session->recorder().meta(nlohmann::json{{"driver_calls", driver_call_profile()}}.dump());
    s.session->recorder().meta(nlohmann::json{{"driver_calls_wrapped", wrapped_call_profile()}}.dump());
  }
  s.recording.store(false);
  s.session->close();
}

}  // namespace

}  // namespace streamhaz::tracer::glue

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace streamhaz::tracer::glue;
  using streamhaz::tracer::Footprints;
  static std::once_flag once;
  static int result = 1;
  std::call_once(once, [] {
    TracerState& s = state();
    if (settings().disabled) return;
    streamhaz::tracer::Session& sess = session();
    std::string why;
    if (s.footprints == Footprints::Exact && start_exact_backend(settings().exact_launches, settings().exact_fine_regions, why)) {
      // The Sanitizer API is the only source now: CUPTI would refuse or be ignored.
      s.gpu_times = streamhaz::tracer::TimingPolicy{streamhaz::tracer::GpuTimes::Off};
      sess.recorder().set_timings_expected(false);
      sess.recorder().set_hold_kernels(true);
    } else {
      if (s.footprints == Footprints::Exact) {
        warn(why + "; tracing with the static tier (argument bytes) instead");
        s.footprints = Footprints::Static;
      }
      if (!subscribe_callbacks(why)) {
        warn(why + "; the program runs untraced");
        s.given_up.store(true);
        return;
      }
      if (!start_activity(s.gpu_times, why)) {
        // Callbacks alone still give a complete trace, only without GPU timestamps.
        warn(why + "; tracing without GPU timestamps");
      }
      // No GPU times at all: the wrappers record the hot calls from the start (steps mode hands
      // them over after its timed steps, activity.cpp).
      if (s.gpu_times.mode == streamhaz::tracer::GpuTimes::Off) hand_hot_calls_to_wrappers();
    }
    s.recording.store(true, std::memory_order_release);
    sess.start_flusher();
    std::atexit(on_exit);
    install_signal_handlers();
    pthread_atfork(nullptr, nullptr, on_fork_child);
  });
  return result;
}
