// The tracer's process-wide state (tracer_state.h): settings read once, the session made on
// first use. Apart from the entry points (injection.cpp), which use it as every other glue file
// does.
#include "tracer_state.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "cuda_facts.h"
#include "nccl_interpose.h"
#include "stack_capture.h"
#include "streamhaz/trace/printable.h"
#include "streamhaz/tracer/self_profile.h"

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
          // The Python side replaces this with what it recorded when the process exits.
          if (settings().allocator_history) h["allocator_history"] = {{"status", "requested"}};
          if (state().footprints == Footprints::Exact) h["exact_launches"] = exact_launches_name(settings().exact_launches);
          return h;
        },
        query_stream, query_comm);
    s.session->recorder().set_kernel_arguments(kernel_arguments_for(s.footprints));
    s.session->recorder().set_step_range(settings().step_range);
    if (settings().allocator_history) s.session->recorder().enable_call_clock();
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

}  // namespace streamhaz::tracer::glue
