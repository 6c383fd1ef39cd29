// The CUPTI side of the exact backend's bridge: a Sanitizer driver-API callback, rebuilt as the
// CUPTI callback data the decoder reads. This file includes cupti.h and not sanitizer.h (the two
// headers define the same placeholder types).
#include <cupti.h>

#include "cuda_facts.h"
#include "driver_decode.h"
#include "exact_backend.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {

void decode_sanitizer_driver_call(uint32_t cbid, const SanitizerDriverCall& call) {
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
  static CudaDriverFacts facts(true);  // exact mode: launches keep their argument bytes
  Decoder decoder{*rec, facts};
  try {
    decode_driver_call(decoder, static_cast<CUpti_CallbackId>(cbid), cb);
  } catch (...) {
    rec->note_dropped();  // losing a record beats crashing the program; the trace counts it
  }
}

void sanitizer_context_created() { gather_header_facts(); }

}  // namespace streamhaz::tracer::glue
