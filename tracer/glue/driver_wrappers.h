// The hot driver calls (kernel launches, async copies and memsets, event records, stream waits,
// event queries, event creation and destruction: nearly every call of a training step) recorded by the tracer's own wrappers
// instead of CUPTI's callbacks, whose dispatch alone costs 2-4 % of a host-bound step.
//
// The program finds these functions in one of three ways, and the preloaded tracer stands in
// each: the CUDA runtime (and NCCL through it) asks cuGetProcAddress, which it finds with dlsym;
// Triton and PyTorch's driver table dlsym them; a library linked against libcuda calls them
// through its PLT, which binds to the first object that defines the name, the tracer. Each way
// yields the same wrapper, which forwards to the driver's own function.
//
// A wrapper has no CUPTI correlation id, so GPU times cannot be matched to its records: while GPU
// times are collected the wrappers only forward and CUPTI's callbacks record. The hand-over
// either way leaves no call recorded twice or not at all: see driver_wrappers.cpp. While the
// wrappers record, CUPTI's callbacks audit them now and then (wrapper_audit.h).
#pragma once

#include <cupti.h>

#include <nlohmann/json.hpp>

namespace streamhaz::tracer::glue {

// Whether the program's calls reach the wrappers: the tracer was preloaded, so its dlsym and its
// driver symbols come before everyone else's. Not so when CUDA_INJECTION64_PATH alone loaded it.
bool driver_wrappers_reachable();

// Hands the hot calls to the wrappers: CUPTI's callbacks for them go off. Call it with no GPU
// times being collected, and never on a thread that issues GPU work: it waits (a second at most)
// for calls already on their way through CUPTI. False when the wrappers are unreachable, the
// settings keep them out (STREAMHAZ_DRIVER_WRAPPERS off, exact footprints, GPU times other than
// steps or off), an audit found a call around them, their audit thread cannot start, or a call
// did not come back in time (CUPTI then keeps them).
bool hand_hot_calls_to_wrappers();
// Hands them back to CUPTI's callbacks, before GPU times are collected again. Never waits.
void hand_hot_calls_to_cupti();
// Whether the wrappers record `cbid` now, so that CUPTI's callback for it stays off.
bool wrappers_record(CUpti_CallbackId cbid);
// For CUPTI's callback of a driver call: whether a wrapper on this thread records that call, so
// that CUPTI's callback (on for a moment during a hand-over, or for an audit) must not record
// it again. While the wrappers record, it also counts, at the call's entry, the hot calls CUPTI
// sees inside a wrapper and those that reached the driver around them (which CUPTI's callback
// then records).
bool recorded_by_wrapper(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site);

// An audit of the wrappers (wrapper_audit.h): CUPTI's callbacks for the hot calls go on again
// while the wrappers keep recording, so that a call that goes around them is seen (and recorded
// by CUPTI). False when the wrappers do not record now.
bool begin_hot_call_audit();
// Ends it: CUPTI's callbacks for the hot calls go off again, unless some call went around the
// wrappers since they first took over: then CUPTI keeps recording them for the rest of the run
// and the wrappers never take over again. Returns how many went around.
uint64_t end_hot_call_audit();

struct WrapperAuditCounts {
  uint64_t audits = 0;             // audits begun
  uint64_t seen_in_wrappers = 0;   // hot calls CUPTI saw inside a wrapper while they recorded
  uint64_t seen_around = 0;        // hot calls CUPTI saw reach the driver around the wrappers
  const char* first_around = "";   // the first of those, by name
};
WrapperAuditCounts wrapper_audit_counts();

}  // namespace streamhaz::tracer::glue
