// Turns one CUPTI driver-API callback (entry or exit) into Recorder events. Enqueue calls are
// recorded at entry (their place in issue order), calls whose outcome matters (creates,
// queries, synchronizations, allocations) at exit.
//
// One table (traced_driver_calls()) lists every traced call with its site and handler: CUPTI
// enabling and dispatch both come from it, so a call cannot be enabled but unhandled, or
// handled but never enabled. What decoding must ask the driver (devices of contexts, memory
// kinds, parameter layouts) goes through DriverFacts, so that tests feed real cu*_params
// structs with fixed answers and no GPU.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer::glue {

enum class MemoryKind { Device, PinnedHost, PageableHost };

// A kernel's parameters as the kernel sees them: offset and size of each.
struct ParamLayout {
  std::vector<std::pair<size_t, size_t>> params;
};

class DriverFacts {
 public:
  virtual ~DriverFacts() = default;
  virtual uint32_t device_of_context(CUcontext ctx) = 0;  // null: the thread's current context
  virtual MemoryKind memory_kind(uint64_t ptr) = 0;
  // The reference stays valid for the life of the facts.
  virtual const ParamLayout& param_layout(CUfunction f) = 0;
  // Whether launches gather their parameter bytes (every footprint tier but api).
  virtual bool wants_param_bytes() = 0;
  // The function's mangled name, for calls that come without one (the tracer's wrappers); null
  // when the driver does not say. Valid for the life of the function's module.
  virtual const char* kernel_name(CUfunction f) = 0;
};

// The launch's parameter bytes laid out per `layout` (kernel_params form), or the `extra`
// buffer's bytes, into `bytes` (cleared first; its capacity is reused).
void kernel_param_bytes(const ParamLayout& layout, void** kernel_params, void** extra, std::string& bytes);

struct Decoder {
  Recorder& rec;
  DriverFacts& facts;
};

enum class CallSite : uint8_t {
  Entry,           // at API entry (enqueues: their place in issue order)
  Exit,            // at exit, when the call succeeded
  ExitOrNotReady,  // at exit, also when it returned CUDA_ERROR_NOT_READY (queries)
  ExitAlways,      // at exit, whatever it returned (the handler reads the result)
};

// `per_thread`: the call is the _ptsz/_ptds variant, whose stream 0 is the thread's own.
using CallHandler = void (*)(Decoder& d, const CUpti_CallbackData& cb, bool per_thread);

struct DriverCall {
  CUpti_CallbackId cbid;
  const char* name;  // CUPTI's name of the call
  CallSite site;
  bool per_thread;
  CallHandler handler;
};

// Every traced call: what subscription enables, and what decode_driver_call dispatches to.
std::span<const DriverCall> traced_driver_calls();
// The table's entry for `cbid`, or null when the call is not traced.
const DriverCall* find_driver_call(CUpti_CallbackId cbid);

void decode_driver_call(Decoder& d, CUpti_CallbackId cbid, const CUpti_CallbackData& cb);

}  // namespace streamhaz::tracer::glue
