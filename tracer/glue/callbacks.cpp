#include "callbacks.h"

#include <cupti.h>

#include "cuda_facts.h"
#include "driver_decode.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {
namespace {

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) gather_header_facts();
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  Recorder* rec = active_recorder();
  if (!rec) return;
  // Made once settings are read (a recorder exists only after that).
  static CudaDriverFacts facts(state().footprints != Footprints::Api);
  Decoder decoder{*rec, facts};
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  try {
    decode_driver_call(decoder, cbid, *cb);
  } catch (...) {
    // Out of memory in the recorder: losing a record beats crashing the program, but the
    // trace says how many were lost (check warns).
    rec->note_dropped();
  }
}

}  // namespace

bool subscribe_callbacks(std::string& why_not) {
  CUpti_SubscriberHandle subscriber;
  CUptiResult r = cuptiSubscribe(&subscriber, on_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    why_not = std::string("cannot subscribe to CUPTI (") + (text ? text : "error") +
              (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "; another profiler holds it" : "") + ")";
    return false;
  }
  // The table that dispatches is the one that enables.
  for (const DriverCall& call : traced_driver_calls()) {
    if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, call.cbid) != CUPTI_SUCCESS) {
      why_not = std::string("cannot enable CUPTI driver callback ") + call.name;
      cuptiUnsubscribe(subscriber);
      return false;
    }
  }
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  return true;
}

}  // namespace streamhaz::tracer::glue
