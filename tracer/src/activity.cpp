#include "activity.h"

#include <cupti.h>

#include <cstdlib>

#include "tracer_state.h"

namespace streamhaz::tracer::glue {
namespace {

constexpr size_t kBufferBytes = 4 << 20;

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Recorder* rec = state().session ? &state().session->recorder() : nullptr;
  CUpti_Activity* record = nullptr;
  while (rec && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
        rec->activity(k->correlationId, k->start, k->end);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        rec->activity(m->correlationId, m->start, m->end);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record);
        rec->activity(m->correlationId, m->start, m->end);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
        rec->activity(m->correlationId, m->start, m->end);
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
}

}  // namespace

bool start_activity(std::string& why_not) {
  if (cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed) != CUPTI_SUCCESS) {
    why_not = "cannot register CUPTI activity buffers";
    return false;
  }
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET}) {
    if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) {
      why_not = "cannot enable CUPTI activity kind " + std::to_string(static_cast<int>(kind));
      return false;
    }
  }
  // Timings reach the trace steadily rather than only when a 4 MiB buffer fills.
  cuptiActivityFlushPeriod(1000);
  return true;
}

void flush_activity() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

}  // namespace streamhaz::tracer::glue
