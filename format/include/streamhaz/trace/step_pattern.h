// Training steps of a program without a step range (no NVTX `step`, no ProfilerStep#N) come from
// the repeating pattern of its collectives and host synchronisations: a training loop issues the
// same all-reduces and the same host waits (loss.item(), timing synchronisations) in the same
// order every step. The analyzer finds the steps in a whole trace (analyzer/src/replay/
// pattern_steps.h); the tracer counts them while the program runs, to end GPU times after the
// steps it times (tracer/core/.../pattern_clock.h). Both take a call's token from here.
#pragma once

#include <cstdint>

#include "streamhaz/trace/records.h"

namespace streamhaz::trace {

// One collective or host synchronisation: equal keys for the same call (kind, size and
// communicator for collectives; the stream for a stream synchronisation; not the event, since
// each step records new ones).
struct StepToken {
  uint64_t key = 0;
  bool host_sync = false;
};

// The token of a record, if it is a collective or a host synchronisation.
bool step_token(const Record& r, StepToken& out);

// The key with the call's stack (its StackRef's call site), where the trace has stacks: a loss
// read and a timing synchronisation are then different calls, as they are to the program.
uint64_t with_call_site(uint64_t key, CallsiteId callsite);

}  // namespace streamhaz::trace
