// CUPTI takes one subscriber per process, and the tracer subscribes at the first CUDA call,
// before any other tool in the process can. Another client's cuptiSubscribe (PyTorch's profiler,
// Kineto, which gives up its GPU timeline when refused) reaches the tracer first, because the
// tracer is preloaded and defines cuptiSubscribe: the tracer then steps aside. It flushes what
// CUPTI holds for it, gives CUPTI back, records nothing more and closes its trace saying from
// which call on the run went unobserved (`check` reports the rest as unchecked), then subscribes
// the caller, whose tool works as it would without the tracer.
#pragma once

#include <cupti.h>

namespace streamhaz::tracer::glue {

// CUPTI's own cuptiSubscribe, for the tracer's subscription.
CUptiResult cupti_subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata);

}  // namespace streamhaz::tracer::glue
