#include "callbacks.h"

#include <cupti.h>

#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "cuda_facts.h"
#include "cupti_handoff.h"
#include "driver_decode.h"
#include "driver_wrappers.h"
#include "stack_capture.h"
#include "tracer_state.h"
#include "streamhaz/tracer/hot_path.h"

namespace streamhaz::tracer::glue {
namespace {

// Which frames a traced call's records want, by callback id (built from the call table).
StackNeed stack_need(const DriverCall& call) {
  const char* n = call.name;
  if (std::strstr(n, "LaunchKernel") || std::strstr(n, "LaunchCooperativeKernel")) return StackNeed::KernelLaunch;
  if (std::strstr(n, "Alloc") || std::strstr(n, "Free") || std::strstr(n, "StreamCreate") || std::strstr(n, "MemMap"))
    return StackNeed::Origin;
  return StackNeed::Operation;
}

const std::vector<StackNeed>& stack_needs() {
  static const std::vector<StackNeed> needs = [] {
    std::vector<StackNeed> v;
    for (const DriverCall& call : traced_driver_calls()) {
      if (call.cbid >= v.size()) v.resize(call.cbid + 1, StackNeed::Operation);
      v[call.cbid] = stack_need(call);
    }
    return v;
  }();
  return needs;
}

// Whether this callback (entry or exit) is the one at which the call is recorded.
bool records_now(CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  const DriverCall* call = find_driver_call(cbid);
  if (!call) return false;
  return (call->site == CallSite::Entry) == (cb.callbackSite == CUPTI_API_ENTER);
}

// --self-profile's callbacks and time per driver call: which calls the floor of the tracer's
// cost is made of (both CUPTI sites of every enabled call come here, recorded or not).
struct CallCount {
  std::atomic<uint64_t> callbacks{0}, ns{0};
  std::atomic<uint64_t> step_callbacks{0}, step_ns{0};  // inside training steps after the warm-up
};
using CallCounts = std::array<CallCount, CUPTI_DRIVER_TRACE_CBID_SIZE>;
CallCounts call_counts;     // CUPTI's callbacks
CallCounts wrapped_counts;  // the wrappers' calls

class CountedCall {
 public:
  CountedCall(CallCounts& counts, CUpti_CallbackId cbid)
      : counts_(counts), cbid_(cbid), start_(self_profiling() && cbid < counts.size() ? profile_clock_ns() : 0) {}
  ~CountedCall() {
    if (!start_) return;
    CallCount& c = counts_[cbid_];
    const uint64_t ns = profile_clock_ns() - start_;
    c.callbacks.fetch_add(1, std::memory_order_relaxed);
    c.ns.fetch_add(ns, std::memory_order_relaxed);
    if (profile_in_step()) {
      c.step_callbacks.fetch_add(1, std::memory_order_relaxed);
      c.step_ns.fetch_add(ns, std::memory_order_relaxed);
    }
  }
  CountedCall(const CountedCall&) = delete;
  CountedCall& operator=(const CountedCall&) = delete;

 private:
  CallCounts& counts_;
  CUpti_CallbackId cbid_;
  uint64_t start_;
};

// One driver call (entry or exit) into records, from CUPTI's callback or a wrapper.
STREAMHAZ_HOT void record_call(CallCounts& counts, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  Recorder* rec = active_recorder();
  if (!rec) return;
  CountedCall counted(counts, cbid);
  PhaseTimer timer(Phase::DriverCallback);
  // Made once settings are read (a recorder exists only after that).
  static CudaDriverFacts facts(state().footprints != Footprints::Api);
  Decoder decoder{*rec, facts};
  try {
    if (stack_capture() && records_now(cbid, cb)) {
      const auto& needs = stack_needs();
      StackScope scope(cbid < needs.size() ? needs[cbid] : StackNeed::Operation);
      decode_driver_call(decoder, cbid, cb);
      return;
    }
    decode_driver_call(decoder, cbid, cb);
  } catch (...) {
    // Out of memory in the recorder: losing a record beats crashing the program, but the
    // trace says how many were lost (check warns).
    rec->note_dropped();
  }
}

STREAMHAZ_HOT void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) gather_header_facts();
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  if (recorded_by_wrapper(cbid, cb.callbackSite)) return;
  record_call(call_counts, cbid, cb);
}

CUpti_SubscriberHandle subscriber = nullptr;  // while the tracer holds CUPTI

}  // namespace

bool holds_cupti() { return subscriber != nullptr; }

bool unsubscribe_callbacks() {
  if (!subscriber) return false;
  cuptiUnsubscribe(subscriber);
  subscriber = nullptr;
  return true;
}

STREAMHAZ_HOT void record_wrapped_driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  record_call(wrapped_counts, cbid, cb);
}

namespace {
nlohmann::json call_profile(const CallCounts& counts) {
  nlohmann::json out = nlohmann::json::object();
  for (const DriverCall& call : traced_driver_calls()) {
    if (call.cbid >= counts.size()) continue;
    const CallCount& c = counts[call.cbid];
    const uint64_t n = c.callbacks.load(std::memory_order_relaxed);
    if (n)
      out[call.name] = {n, c.ns.load(std::memory_order_relaxed), c.step_callbacks.load(std::memory_order_relaxed),
                        c.step_ns.load(std::memory_order_relaxed)};
  }
  return out;
}
}  // namespace

nlohmann::json driver_call_profile() { return call_profile(call_counts); }
nlohmann::json wrapped_call_profile() { return call_profile(wrapped_counts); }

bool enable_driver_callback(CUpti_CallbackId cbid, bool on) {
  return subscriber && cuptiEnableCallback(on ? 1 : 0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS;
}

bool enable_driver_callbacks(bool on) {
  if (!subscriber) return false;
  bool all = true;
  for (const DriverCall& call : traced_driver_calls())
    if (!on || !wrappers_record(call.cbid)) all &= enable_driver_callback(call.cbid, on);
  return all;
}

bool subscribe_callbacks(std::string& why_not) {
  // CUPTI's own entry point: the name cuptiSubscribe is the tracer's hand-off (cupti_handoff.h).
  CUptiResult r = cupti_subscribe(&subscriber, on_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    why_not = std::string("cannot subscribe to CUPTI (") + (text ? text : "error") +
              (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "; another profiler holds it" : "") + ")";
    subscriber = nullptr;
    return false;
  }
  // The table that dispatches is the one that enables.
  for (const DriverCall& call : traced_driver_calls()) {
    if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, call.cbid) != CUPTI_SUCCESS) {
      why_not = std::string("cannot enable CUPTI driver callback ") + call.name;
      unsubscribe_callbacks();
      return false;
    }
  }
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  return true;
}

}  // namespace streamhaz::tracer::glue
