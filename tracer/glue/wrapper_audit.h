// Audits of the driver wrappers (driver_wrappers.h). Once the wrappers record the hot calls,
// CUPTI no longer sees those calls, so a way to the driver the tracer does not stand in (a
// library that finds the driver's functions by a path the tracer does not hook) would go
// unrecorded, and with it the ordering or the accesses of its calls. A background thread switches
// CUPTI's callbacks for the hot calls on again for a short window every few seconds while the
// wrappers keep recording: a call CUPTI then sees outside any wrapper went around them. At the
// first such call CUPTI records the hot calls for the rest of the run, and the trace says which
// part of the run may lack calls (an `unobserved` span: `check` reports the run as checked only
// in part). Calls around the wrappers made only between windows are not seen: the audit samples.
#pragma once

namespace streamhaz::tracer::glue {

// Starts the audits, once, before the wrappers first take over; false when no thread could be
// made (unaudited, the wrappers must not take over).
bool start_wrapper_audits();
// Stops them at exit, before the trace closes, and writes their counts into it.
void stop_wrapper_audits();

}  // namespace streamhaz::tracer::glue
