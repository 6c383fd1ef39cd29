// The hot driver calls (kernel launches, async copies and memsets, event records, stream waits,
// event queries: nearly every call of a training step) recorded by the tracer's own wrappers
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
// either way leaves no call recorded twice or not at all: see driver_wrappers.cpp.
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
// steps or off), or a call did not come back in time (CUPTI then keeps them).
bool hand_hot_calls_to_wrappers();
// Hands them back to CUPTI's callbacks, before GPU times are collected again. Never waits.
void hand_hot_calls_to_cupti();
// Whether the wrappers record `cbid` now, so that CUPTI's callback for it stays off.
bool wrappers_record(CUpti_CallbackId cbid);
// Whether this thread is inside a wrapper that records its own call: CUPTI's callback for that
// call (on for a moment during a hand-over) must then not record it again.
bool inside_recording_wrapper();

}  // namespace streamhaz::tracer::glue
