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
#include "exact_backend.h"
#include "cuda_facts.h"
#include "nccl_interpose.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {

TracerState& state() {
  static TracerState* s = new TracerState;  // never destroyed: callbacks may come late
  return *s;
}

void warn(const std::string& what) { std::fprintf(stderr, "streamhaz: %s\n", what.c_str()); }

namespace {

Footprints footprints_from_env() {
  const char* v = std::getenv("STREAMHAZ_FOOTPRINTS");
  if (!v || !*v) return Footprints::Pointer;
  if (std::strcmp(v, "api") == 0) return Footprints::Api;
  if (std::strcmp(v, "pointer") == 0) return Footprints::Pointer;
  if (std::strcmp(v, "static") == 0) return Footprints::Static;
  if (std::strcmp(v, "exact") == 0) return Footprints::Exact;
  warn(std::string("STREAMHAZ_FOOTPRINTS: '") + v + "' is not one of api, pointer, static, exact; using pointer");
  return Footprints::Pointer;
}

// The launch arguments each tier needs in the trace.
KernelArguments kernel_arguments_for(Footprints f) {
  switch (f) {
    case Footprints::Api: return KernelArguments::Drop;
    case Footprints::Pointer: return KernelArguments::Pointers;
    default: return KernelArguments::PointersAndBytes;
  }
}

// STREAMHAZ_GPU_TIMES: all, sampled[:WINDOW_MS/PERIOD_MS] (default) or off. A value the
// tracer cannot read must not stop the program: one warning, and the default.
TimingPolicy gpu_times_from_env() {
  const char* v = std::getenv("STREAMHAZ_GPU_TIMES");
  if (!v || !*v) return {};
  std::string why;
  if (auto policy = parse_timing_policy(v, why)) return *policy;
  warn("STREAMHAZ_GPU_TIMES: " + why + "; using " + TimingPolicy{}.describe());
  return {};
}

const char* footprints_name(Footprints f) {
  switch (f) {
    case Footprints::Pointer: return "pointer";
    case Footprints::Static: return "static";
    case Footprints::Exact: return "exact";
    default: return "api";
  }
}

SessionOptions options_from_env() {
  SessionOptions o;
  const char* dir = std::getenv("STREAMHAZ_OUT_DIR");
  o.out_dir = dir && *dir ? dir : "streamhaz-trace";
  if (const char* ms = std::getenv("STREAMHAZ_FLUSH_MS")) o.flush_period = std::chrono::milliseconds(std::atoi(ms));
  return o;
}

std::once_flag session_once;

}  // namespace

Session& session() {
  std::call_once(session_once, [] {
    TracerState& s = state();
    s.footprints = footprints_from_env();
    s.gpu_times = gpu_times_from_env();
    ProcessIdentity who = this_process_identity();
    s.session = new Session(
        options_from_env(), who,
        [who] {
          // Read when the file opens, after injection settled the tier (exact may fall back).
          nlohmann::json h = base_header(who, footprints_name(state().footprints));
          // Read when the file opens, after injection settled what the trace holds.
          h["gpu_times"] = state().gpu_times.describe();
          nlohmann::json facts = header_facts();
          for (auto it = facts.begin(); it != facts.end(); ++it) h[it.key()] = it.value();
          if (!h.contains("devices")) h["devices"] = nlohmann::json::array();
          return h;
        },
        query_stream, query_comm);
    s.session->recorder().set_kernel_arguments(kernel_arguments_for(s.footprints));
  });
  return *state().session;
}

Recorder* early_recorder() {
  TracerState& s = state();
  if (s.given_up.load(std::memory_order_relaxed)) return nullptr;
  return &session().recorder();
}

namespace {

struct sigaction previous_term, previous_int;

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  TracerState& s = state();
  if (s.recording.load()) s.session->flush_from_signal();
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
  s.given_up.store(true);
  if (s.session) s.session->forget_after_fork();
}

void on_exit() {
  TracerState& s = state();
  if (!s.recording.load()) return;
  if (s.footprints != Footprints::Exact) {  // exact mode never subscribed CUPTI
    stop_activity_sampler();
    flush_activity();  // the timings still in CUPTI's buffers
  }
  s.recording.store(false);
  s.session->close();
}

}  // namespace

}  // namespace streamhaz::tracer::glue

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace streamhaz::tracer::glue;
  static std::once_flag once;
  static int result = 1;
  std::call_once(once, [] {
    TracerState& s = state();
    if (std::getenv("STREAMHAZ_DISABLE")) return;
    streamhaz::tracer::Session& sess = session();
    std::string why;
    if (s.footprints == Footprints::Exact && start_exact_backend(why)) {
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
    }
    s.recording.store(true, std::memory_order_release);
    sess.start_flusher();
    std::atexit(on_exit);
    install_signal_handlers();
    pthread_atfork(nullptr, nullptr, on_fork_child);
  });
  return result;
}
