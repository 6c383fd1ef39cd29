// Stands in for another profiler: takes the one CUPTI subscription when loaded (LD_PRELOAD),
// so the tracer's GPU test can check that the tracer then warns once and stays out of the way.
#include <cupti.h>

#include <cstdio>

namespace {
void CUPTIAPI ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

__attribute__((constructor)) void take_cupti() {
  CUpti_SubscriberHandle handle;
  if (cuptiSubscribe(&handle, ignore, nullptr) != CUPTI_SUCCESS) std::fprintf(stderr, "squatter: subscribe failed\n");
}
}  // namespace
