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
//   once      the same with one switch off and on again (at STREAMHAZ_FLOOR_LAUNCHES calls, on
//             1000 calls later), then off for good 20000 calls after: whether a single re-enable costs
//   late      kernel and copy activity off at the start, on once at STREAMHAZ_FLOOR_LAUNCHES
//             calls (the context exists by then) and off for good 20000 calls later: whether it is
//             enabling after the start, rather than enabling again, that costs
//   context   with `toggle` or `once`: the switches go through cuptiActivityEnableContext /
//             DisableContext on the context of the last call seen, not the global switches
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
std::atomic<CUcontext> last_context{nullptr};  // for `context`

// Counts the driver calls whose callbacks are on: kernel launches, or with `driver` or `traced`
// every driver call that has one.
void CUPTIAPI count_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call->callbackSite != CUPTI_API_ENTER) return;
  launches.fetch_add(1, std::memory_order_relaxed);
  if (call->context) last_context.store(call->context, std::memory_order_relaxed);
}

constexpr CUpti_ActivityKind kTimedKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                              CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};
bool per_context = false;  // `context`: switch the last call's context, not every one

void switch_activity(bool on) {
  CUcontext context = last_context.load(std::memory_order_relaxed);
  for (CUpti_ActivityKind kind : kTimedKinds) {
    CUptiResult r = !per_context ? (on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind))
                    : on         ? cuptiActivityEnableContext(context, kind)
                                 : cuptiActivityDisableContext(context, kind);
    if (r != CUPTI_SUCCESS)
      std::fprintf(stderr, "cupti_floor: switching activity kind %d %s failed (%d)\n", static_cast<int>(kind),
                   on ? "on" : "off", static_cast<int>(r));
  }
}
void disable_activity() { switch_activity(false); }
void enable_activity() { switch_activity(true); }

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
  // `until`, `toggle`, `once` and `late` count calls: the launches', unless wider callbacks are on.
  const bool counts = wants(mix, "until") || wants(mix, "toggle") || wants(mix, "once") || wants(mix, "late");
  per_context = wants(mix, "context");
  if (wants(mix, "launch") || (counts && !wants(mix, "traced") && !wants(mix, "driver"))) {
    for (CUpti_CallbackId id :
         {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz})
      check(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id), "launch callback");
  }
  if (wants(mix, "kernel") || wants(mix, "copies")) {
    check(cuptiActivityRegisterCallbacks(give_buffer, drop_buffer), "activity buffers");
    const bool late = wants(mix, "late");  // nothing on until the calls are counted
    if (wants(mix, "kernel") && !late)
      check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernel activity");
    if (wants(mix, "copies") && !late) {
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
    if (wants(mix, "toggle") || wants(mix, "once")) {
      std::thread([limit = call_limit(), switches = wants(mix, "once") ? 1 : 10] {
        for (uint64_t i = 0; i < static_cast<uint64_t>(switches); ++i) {
          wait_for_calls(limit + 2000 * i);
          disable_activity();
          wait_for_calls(limit + 2000 * i + 1000);
          enable_activity();
        }
        wait_for_calls(limit + 20000);
        disable_activity();
        std::fprintf(stderr, "cupti_floor: activity off for good after %d switch(es) off and on%s\n", switches,
                     per_context ? " (per context)" : "");
      }).detach();
    }
    if (late) {
      std::thread([limit = call_limit()] {
        wait_for_calls(limit);
        enable_activity();
        wait_for_calls(limit + 20000);
        disable_activity();
        std::fprintf(stderr, "cupti_floor: activity on late, once, then off for good\n");
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
