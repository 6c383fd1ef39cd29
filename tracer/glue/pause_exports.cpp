// streamhaz_tracer_pause: switches recording off and on again inside one process, so that a
// benchmark can time traced and untraced steps side by side (bench/real_step_cost.sh, "in one
// process"): on the GPU machine, separate runs drift apart by more than the cost measured.
// While paused, CUPTI's driver callbacks are off and NCCL calls pass straight through; the
// trace says that it did not see the whole run, so check reports it as observed only in part.
// A process that exits paused also leaves out the GPU times still in CUPTI's buffers then.
#include <mutex>

#include <nlohmann/json.hpp>

#include "callbacks.h"
#include "tracer_state.h"

using namespace streamhaz::tracer::glue;

// 1: the tracer is now paused (pause != 0) or recording (pause == 0); 0: it is not tracing
// this process through CUPTI (disabled, exact tier, stepped aside), so there is nothing to switch.
extern "C" __attribute__((visibility("default"))) int streamhaz_tracer_pause(int pause) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  TracerState& s = state();
  if (s.given_up.load() || !holds_cupti() || !s.session) return 0;
  if (pause) {
    if (s.paused.load()) return 1;
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
    enable_driver_callbacks(false);
    return 1;
  }
  if (!s.paused.load()) return s.recording.load() ? 1 : 0;
  enable_driver_callbacks(true);
  s.recording.store(true, std::memory_order_release);
  s.paused.store(false);
  return 1;
}
