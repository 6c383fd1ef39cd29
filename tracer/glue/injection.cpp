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
#include "native_frames.h"
#include "nccl_interpose.h"
#include "stack_capture.h"
#include "streamhaz/trace/printable.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {

TracerState& state() {
  static TracerState* s = new TracerState;  // never destroyed: callbacks may come late
  return *s;
}

// Escaped: the text may quote a value from the environment.
void warn(const std::string& what) { std::fprintf(stderr, "streamhaz: %s\n", trace::printable(what).c_str()); }

namespace {

// The launch arguments each tier needs in the trace.
KernelArguments kernel_arguments_for(Footprints f) {
  switch (f) {
    case Footprints::Api: return KernelArguments::Drop;
    case Footprints::Pointer: return KernelArguments::Pointers;
    default: return KernelArguments::PointersAndBytes;
  }
}

SessionOptions session_options(const TracerSettings& settings) {
  SessionOptions o;
  o.out_dir = settings.out_dir;
  o.flush_period = settings.flush_period;
  return o;
}

std::once_flag session_once;

}  // namespace

const TracerSettings& settings() {
  // Never destroyed: callbacks may come late. A bad value must not stop the program.
  static const TracerSettings* s = [] {
    std::vector<std::string> warnings;
    auto* read = new TracerSettings(read_tracer_settings([](const char* name) { return std::getenv(name); }, warnings));
    for (const std::string& w : warnings) warn(w);
    return read;
  }();
  return *s;
}

Session& session() {
  std::call_once(session_once, [] {
    TracerState& s = state();
    s.footprints = settings().footprints;
    s.gpu_times = settings().gpu_times;
    enable_self_profile(settings().self_profile);
    ProcessIdentity who = this_process_identity();
    s.session = new Session(
        session_options(settings()), who,
        [who] {
          // Read when the file opens, after injection settled the tier (exact may fall back).
          nlohmann::json h = base_header(who, footprints_name(state().footprints));
          // Read when the file opens, after injection settled what the trace holds.
          h["gpu_times"] = state().gpu_times.describe();
          nlohmann::json facts = header_facts();
          for (auto it = facts.begin(); it != facts.end(); ++it) h[it.key()] = it.value();
          if (!h.contains("devices")) h["devices"] = nlohmann::json::array();
          nlohmann::json stacks{{"mode", stacks_name(settings().stacks)}};
          if (const StackCapture* capture = stack_capture()) stacks["python"] = capture->python_status();
          h["stacks"] = stacks;
          if (state().footprints == Footprints::Exact) h["exact_launches"] = exact_launches_name(settings().exact_launches);
          return h;
        },
        query_stream, query_comm);
    s.session->recorder().set_kernel_arguments(kernel_arguments_for(s.footprints));
    s.session->recorder().set_step_range(settings().step_range);
    if (settings().stacks != Stacks::Off) {
      auto* capture = new StackCapture(settings().stacks);  // lives as long as the process
      set_stack_capture(capture);
      s.session->recorder().set_stack_source(capture, settings().path_prefix_map);
    }
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
  } else if (std::string summary = exact_backend_summary(); !summary.empty()) {
    warn(summary);
  }
  if (self_profiling()) {
    const UnwindCounts u = unwind_counts();
    s.session->recorder().meta(nlohmann::json{{"native_unwinds", {{"fast", u.fast}, {"slow", u.slow}, {"checked", u.checked},
                                                                  {"differed", u.differed}, {"sizes_learned", u.sizes_learned}}}}
                                   .dump());
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
    }
    s.recording.store(true, std::memory_order_release);
    sess.start_flusher();
    std::atexit(on_exit);
    install_signal_handlers();
    pthread_atfork(nullptr, nullptr, on_fork_child);
  });
  return result;
}
