// What CUPTI alone costs per API call, without the tracer's own work: an injection library
// (CUDA_INJECTION64_PATH) that subscribes with an empty callback and enables what
// STREAMHAZ_FLOOR asks for, a comma-separated list of:
//   launch    driver callbacks for the kernel launch calls
//   driver    every driver API callback
//   traced    the tracer's own callback set: every driver call it traces (its table,
//             tracer/glue/driver_decode.h) and the context-created resource callback
//   kernel    CONCURRENT_KERNEL activity
//   copies    MEMCPY, MEMCPY2 and MEMSET activity
//   period    CUPTI's worker flushes every second (the tracer's setting; with kernel or copies)
//   briefly   kernel and copy activity on for the first 2 s only, then disabled (as the tracer's
//             default times a few steps): whether CUPTI's per-call cost falls back once off
//   toggle    kernel and copy activity switched off and on again 10 times, from
//             STREAMHAZ_FLOOR_LAUNCHES calls on (as `until` counts them) every 1000 calls (the
//             tracer's sampled windows and timed steps switch it so), then off for good
//   until     kernel and copy activity on until STREAMHAZ_FLOOR_LAUNCHES calls (default 20000)
//             have come through the callbacks, then disabled: kernel launches (this turns their
//             callbacks on), or with `driver` or `traced` every driver call that has one. Whether
//             kernels first launched while activity was on keep costing more
// scripts/gpu/launch_overhead.sh runs the launch benchmark under each mix beside the tracer, so
// that the tracer's added time splits into CUPTI's part and ours.
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "driver_decode.h"

namespace {

std::atomic<uint64_t> launches{0};

// Counts the driver calls whose callbacks are on: kernel launches, or with `driver` or `traced`
// every driver call that has one.
void CUPTIAPI count_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER)
    launches.fetch_add(1, std::memory_order_relaxed);
}

void disable_activity() {
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET})
    cuptiActivityDisable(kind);
}

void enable_activity() {
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET})
    cuptiActivityEnable(kind);
}

// STREAMHAZ_FLOOR_LAUNCHES: where `until` and `toggle` start counting from.
uint64_t call_limit() {
  const char* n = std::getenv("STREAMHAZ_FLOOR_LAUNCHES");
  return n ? std::strtoull(n, nullptr, 10) : 20000;
}

void wait_for_calls(uint64_t calls) {
  while (launches.load(std::memory_order_relaxed) < calls) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

constexpr size_t kBufferBytes = 4 << 20;

void CUPTIAPI give_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI drop_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

bool wants(const std::string& list, const char* item) {
  return (',' + list + ',').find(std::string(",") + item + ',') != std::string::npos;
}

bool check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  std::fprintf(stderr, "cupti_floor: %s failed (%d)\n", what, static_cast<int>(r));
  return false;
}

void flush_at_exit() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* env = std::getenv("STREAMHAZ_FLOOR");
  const std::string mix = env ? env : "";
  CUpti_SubscriberHandle subscriber;
  if (!check(cuptiSubscribe(&subscriber, count_callback, nullptr), "subscribe")) return 1;
  if (wants(mix, "driver")) check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "driver domain");
  if (wants(mix, "traced")) {
    for (const streamhaz::tracer::glue::DriverCall& call : streamhaz::tracer::glue::traced_driver_calls())
      check(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, call.cbid), call.name);
    check(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
          "context callback");
  }
  // `until` and `toggle` count calls: the launches', unless wider callbacks are on.
  const bool counts = wants(mix, "until") || wants(mix, "toggle");
  if (wants(mix, "launch") || (counts && !wants(mix, "traced") && !wants(mix, "driver"))) {
    for (CUpti_CallbackId id :
         {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz})
      check(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id), "launch callback");
  }
  if (wants(mix, "kernel") || wants(mix, "copies")) {
    check(cuptiActivityRegisterCallbacks(give_buffer, drop_buffer), "activity buffers");
    if (wants(mix, "kernel")) check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernel activity");
    if (wants(mix, "copies")) {
      for (CUpti_ActivityKind kind :
           {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET})
        check(cuptiActivityEnable(kind), "copy activity");
    }
    if (wants(mix, "period")) check(cuptiActivityFlushPeriod(1000), "flush period");
    std::atexit(flush_at_exit);
    if (wants(mix, "briefly")) {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        disable_activity();
      }).detach();
    }
    if (wants(mix, "toggle")) {
      std::thread([limit = call_limit()] {
        for (uint64_t i = 0; i < 10; ++i) {
          wait_for_calls(limit + 2000 * i);
          disable_activity();
          wait_for_calls(limit + 2000 * i + 1000);
          enable_activity();
        }
        wait_for_calls(limit + 20000);
        disable_activity();
        std::fprintf(stderr, "cupti_floor: activity off for good after 10 switches off and on\n");
      }).detach();
    }
    if (wants(mix, "until")) {
      std::thread([limit = call_limit()] {
        wait_for_calls(limit);
        disable_activity();
        std::fprintf(stderr, "cupti_floor: activity off after %llu launches\n",
                     static_cast<unsigned long long>(launches.load()));
      }).detach();
    }
  }
  return 1;
}
