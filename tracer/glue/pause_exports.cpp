// streamhaz_tracer_pause: switches recording off and on again inside one process, so that a
// benchmark can time traced and untraced steps side by side (bench/real_step_cost.sh, "in one
// process"): on the GPU machine, separate runs drift apart by more than the cost measured.
// While paused, CUPTI's driver callbacks are off (or on and ignored) and NCCL calls pass
// straight through; the trace says that it did not see the whole run, so check reports it as
// observed only in part.
// A process that exits paused also leaves out the GPU times still in CUPTI's buffers then.
#include <mutex>

#include <nlohmann/json.hpp>

#include "callbacks.h"
#include "tracer_state.h"

using namespace streamhaz::tracer::glue;

// `pause`: 0 records again; 1 pauses with CUPTI's driver callbacks off; 2 pauses with them left
// on, the tracer returning from each at once, so that a benchmark can tell CUPTI's dispatch from
// the tracer's own work. Returns 1 when the tracer is now in that state, 0 when it is not tracing
// this process through CUPTI (disabled, exact tier, stepped aside) or `pause` is out of range.
extern "C" __attribute__((visibility("default"))) int streamhaz_tracer_pause(int pause) {
  static std::mutex mu;
  static int level = 0;  // the state last set here
  std::lock_guard lock(mu);
  TracerState& s = state();
  if (pause < 0 || pause > 2 || s.given_up.load() || !holds_cupti() || !s.session) return 0;
  if (pause == level) return s.paused.load() || s.recording.load() ? 1 : 0;
  if (pause != 0) {
    if (level == 0) {
      if (!s.recording.load()) return 0;
      static bool said = false;
      if (!said) {
        streamhaz::tracer::Recorder& rec = s.session->recorder();
        const nlohmann::json why{{"from_seq", rec.last_seq() + 1},
                                 {"reason", "paused by streamhaz_tracer_pause (a cost measurement)"}};
        rec.meta(nlohmann::json{{"unobserved", why}}.dump());
        said = true;
      }
      s.paused.store(true);
      s.recording.store(false, std::memory_order_release);
    }
    enable_driver_callbacks(pause == 2);
    level = pause;
    return 1;
  }
  if (!s.paused.load()) return 0;  // stepped aside or closed while paused
  if (level == 1) enable_driver_callbacks(true);
  s.recording.store(true, std::memory_order_release);
  s.paused.store(false);
  level = 0;
  return 1;
}
