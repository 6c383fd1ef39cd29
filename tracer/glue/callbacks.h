// CUPTI driver-API callbacks: decode each call's parameters into Recorder events.
#pragma once

#include <cupti.h>

#include <string>

#include <nlohmann/json.hpp>

namespace streamhaz::tracer::glue {

// Subscribes and enables the driver API calls the trace needs. False (with the reason) when
// CUPTI is already taken by another tool or refuses.
bool subscribe_callbacks(std::string& why_not);
// Gives CUPTI back (cupti_handoff.cpp: another client asked for it); false when not subscribed.
bool unsubscribe_callbacks();
bool holds_cupti();
// Switches the driver API callbacks off and on again, for a paused tracer (pause_exports.cpp);
// false when not subscribed or CUPTI refused one of them. Calls the tracer's wrappers record
// (driver_wrappers.h) stay off.
bool enable_driver_callbacks(bool on);
// Switches CUPTI's callback for one traced call (the wrappers' hand-over); false when not
// subscribed or CUPTI refused.
bool enable_driver_callback(CUpti_CallbackId cbid, bool on);
// Records one call the way CUPTI's callback does, for the tracer's wrappers: `cb` holds what a
// CUPTI callback would (site, parameters, return value at exit); no context (the thread's
// current one), no symbol name (asked of the driver) and no correlation id (no GPU time).
void record_wrapped_driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData& cb);
// With --self-profile on: the callbacks (entries and exits) each traced driver call received and
// the time spent in them, overall and inside training steps after the warm-up,
// {"cuLaunchKernel": [callbacks, ns, step_callbacks, step_ns], ...}; calls never made left out.
nlohmann::json driver_call_profile();
// The same for the calls the wrappers recorded (one each, no callbacks).
nlohmann::json wrapped_call_profile();

}  // namespace streamhaz::tracer::glue
