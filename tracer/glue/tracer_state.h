// Process-wide state of the tracer library, shared by the CUPTI, NCCL and NVTX entry points.
// The session exists from the first entry that needs it (an NVTX range can come before CUDA
// is initialised), but records reach a file only once CUPTI subscription succeeded.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "streamhaz/tracer/session.h"
#include "streamhaz/tracer/settings.h"
#include "streamhaz/tracer/timing_policy.h"

namespace streamhaz::tracer::glue {

struct TracerState {
  std::atomic<bool> recording{false};  // CUPTI subscribed, process not forked, not closed
  std::atomic<bool> given_up{false};   // CUPTI refused us: stay out of the way
  // streamhaz_tracer_pause(1) (pause_exports.cpp): recording is false meanwhile, but the session
  // is still the tracer's to flush and close.
  std::atomic<bool> paused{false};
  Footprints footprints = Footprints::Pointer;
  TimingPolicy gpu_times;  // when CUPTI activity is on (STREAMHAZ_GPU_TIMES)
  Session* session = nullptr;
};

TracerState& state();
// The STREAMHAZ_* settings (streamhaz/tracer/settings.h), read once; a bad value warns once.
const TracerSettings& settings();
// The session, created on first use (never null after that).
Session& session();
// The recorder when recording, else null: the one check on every hot path.
inline Recorder* active_recorder() {
  TracerState& s = state();
  return s.recording.load(std::memory_order_acquire) ? &s.session->recorder() : nullptr;
}
// The recorder for NVTX and names: these are kept before CUDA starts, too.
Recorder* early_recorder();

// Prints one line "streamhaz: <what>" on stderr.
void warn(const std::string& what);

}  // namespace streamhaz::tracer::glue
