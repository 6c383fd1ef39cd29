// CUPTI activity: GPU start/end timestamps of kernels, copies and sets, handed to the
// recorder by correlation id from CUPTI's buffer-completion thread. Collected always, never,
// in sampled windows switched by a background thread, or by training steps (TimingPolicy).
#pragma once

#include <string>

#include "streamhaz/tracer/timing_policy.h"

namespace streamhaz::tracer::glue {

// Starts collection as `policy` says. Where it cannot, `policy` is changed to what the trace
// will hold (off when activity failed, all when no window thread could start).
bool start_activity(TimingPolicy& policy, std::string& why_not);
void stop_activity_sampler();  // joins the window thread, if any; collection stays as it is
void flush_activity();         // blocks until CUPTI delivered every buffer
void give_up_activity();       // for good: delivers what CUPTI holds, then collects nothing more
// GPU times by steps: the program began step `index` (0 for its first) or ended it.
void on_step_begin(int index);
void on_step_end();

}  // namespace streamhaz::tracer::glue
