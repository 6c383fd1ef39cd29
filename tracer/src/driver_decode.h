// Turns one CUPTI driver-API callback (entry or exit) into Recorder events. Enqueue calls are
// recorded at entry (their place in issue order), calls whose outcome matters (creates,
// queries, synchronizations, allocations) at exit.
#pragma once

#include <cupti.h>

#include <vector>

#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer::glue {

const std::vector<CUpti_CallbackId>& traced_driver_calls();
void decode_driver_call(Recorder& rec, CUpti_CallbackId cbid, const CUpti_CallbackData& cb);

}  // namespace streamhaz::tracer::glue
