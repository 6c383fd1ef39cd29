// The CUPTI side of the exact backend's bridge: a Sanitizer driver-API callback, rebuilt as the
// CUPTI callback data the decoder reads. This file includes cupti.h and not sanitizer.h (the two
// headers define the same placeholder types).
#include <cupti.h>

#include "driver_decode.h"
#include "exact_backend.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {

void decode_sanitizer_driver_call(uint32_t cbid, const DriverCall& call) {
  Recorder* rec = active_recorder();
  if (!rec) return;
  CUpti_CallbackData cb{};
  cb.callbackSite = call.exit ? CUPTI_API_EXIT : CUPTI_API_ENTER;
  cb.functionName = call.function_name;
  cb.functionParams = const_cast<void*>(call.params);
  cb.functionReturnValue = const_cast<void*>(call.return_value);
  cb.symbolName = call.symbol_name;
  cb.context = call.context;
  cb.correlationId = call.correlation;
  try {
    decode_driver_call(*rec, static_cast<CUpti_CallbackId>(cbid), cb);
  } catch (...) {
    // Out of memory in the recorder: losing a record beats crashing the program.
  }
}

}  // namespace streamhaz::tracer::glue
