// The exact footprint tier's backend. Compute Sanitizer and CUPTI cannot serve one process
// (measured on H200, CUDA 13.0: whichever subscribes second is refused or never called back), so
// in exact mode the Sanitizer API is the tracer's only source: its driver-API callbacks feed the
// same decoder as CUPTI's (same callback ids, same parameter structs), and its launch callbacks
// attach each kernel's instrumented byte ranges. There are no GPU times in this mode.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "streamhaz/tracer/settings.h"

namespace streamhaz::tracer::glue {

// One driver-API callback of the Sanitizer API, in the terms the CUPTI decoder needs. Kept free
// of both tool headers, which cannot be included together.
struct SanitizerDriverCall {
  bool exit = false;
  const char* function_name = nullptr;
  const void* params = nullptr;
  const void* return_value = nullptr;  // CUresult*, at exit
  const char* symbol_name = nullptr;
  CUcontext context = nullptr;
  uint32_t correlation = 0;  // paired entry/exit ids made up per thread (the API has none)
};

// sanitizer_bridge.cpp: runs the CUPTI decoder on a Sanitizer driver callback, and gathers the
// header's facts when a context is made (cuda_facts.h cannot be included beside sanitizer.h).
void decode_sanitizer_driver_call(uint32_t cbid, const SanitizerDriverCall& call);
void sanitizer_context_created();

// Subscribes to the Compute Sanitizer API (loaded at run time) and patches every module loaded
// from now on. False, with the reason, where it is missing or refuses. `fine_regions`: the
// fine level's limit per launch (footprint_table.h's Layout::fine_limit; 0: all of it).
bool start_exact_backend(ExactLaunches launches, uint32_t fine_regions, std::string& why_not);
// One line on what the exact tier did (launches instrumented, served by the memo), for exit.
std::string exact_backend_summary();

}  // namespace streamhaz::tracer::glue
