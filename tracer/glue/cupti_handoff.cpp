#include "cupti_handoff.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "activity.h"
#include "callbacks.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {
namespace {

using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);

// The next definition after the tracer's: CUPTI's (or another interposer's before it).
SubscribeFn next_subscribe() {
  static const SubscribeFn next = reinterpret_cast<SubscribeFn>(dlsym(RTLD_NEXT, "cuptiSubscribe"));
  return next;
}

// Where the other client's call came from, for the warning (its loaded object's file name).
std::string caller_name(const void* return_address) {
  Dl_info info{};
  if (!dladdr(return_address, &info) || !info.dli_fname) return "another CUPTI client";
  std::string path = info.dli_fname;
  return path.substr(path.rfind('/') + 1);
}

void step_aside(const std::string& client) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  TracerState& s = state();
  if ((!s.recording.load() && !s.paused.load()) || !s.session) return;
  if (!holds_cupti()) return;  // the exact tier never subscribed: nothing to give back
  give_up_activity();  // the GPU times CUPTI still holds for operations already recorded
  unsubscribe_callbacks();
  const std::string why = client + " subscribed to CUPTI, which takes one subscriber (a profiler such as "
                                   "torch.profiler); the tracer gave it up";
  const uint64_t from = s.session->recorder().stop_observing(why);
  s.recording.store(false);
  s.paused.store(false);
  s.given_up.store(true);
  s.session->close();
  warn(why + ": calls from #" + std::to_string(from) +
       " on are not in the trace, and check reports that part of the run as unchecked");
}

}  // namespace

CUptiResult cupti_subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  const SubscribeFn next = next_subscribe();
  return next ? next(subscriber, callback, userdata) : CUPTI_ERROR_UNKNOWN;
}

}  // namespace streamhaz::tracer::glue

extern "C" __attribute__((visibility("default"))) CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                                                             CUpti_CallbackFunc callback,
                                                                             void* userdata) {
  using namespace streamhaz::tracer::glue;
  try {
    step_aside(caller_name(__builtin_return_address(0)));
  } catch (...) {
    // Giving CUPTI up must never fail the other tool's call: it still gets its answer below.
  }
  return cupti_subscribe(subscriber, callback, userdata);
}
