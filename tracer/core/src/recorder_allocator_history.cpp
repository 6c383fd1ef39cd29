// The recorder's side of PyTorch's allocator history: each allocation placed among the calls
// by the call clock, with the stack PyTorch took for it (allocator_history.h).
#include <nlohmann/json.hpp>

#include "streamhaz/tracer/recorder.h"
#include "streamhaz/tracer/self_profile.h"

namespace streamhaz::tracer {

using namespace streamhaz::trace;

void Recorder::enable_call_clock() {
  TimedLock lock(mu_);
  if (!call_clock_) call_clock_ = std::make_unique<CallClock>();
}

size_t Recorder::allocator_history(const std::vector<HistoryAllocation>& allocations) {
  TimedLock lock(mu_);
  size_t written = 0, unplaced = 0;
  for (const HistoryAllocation& a : allocations) {
    TensorAlloc t;
    // Without a clock (the history came though the setting was off) every call is "after".
    t.before_seq = call_clock_ ? call_clock_->first_call_at_or_after(a.unix_us) : 0;
    unplaced += t.before_seq == 0;
    t.ptr = a.ptr;
    t.bytes = a.bytes;
    t.device = a.device;
    t.stream = a.stream;
    t.callsite = stacks_ ? stacks_->intern_named(a.frames) : 0;
    sink_.add(t);
    ++written;
  }
  nlohmann::json status{{"status", "recorded"}, {"allocations", written}};
  if (unplaced) status["unplaced"] = unplaced;  // older than the call clock's oldest sample
  if (!stacks_) status["stacks"] = "off";
  sink_.add(Meta{nlohmann::json{{"allocator_history", status}}.dump()});
  return written;
}

void Recorder::allocator_history_unavailable(std::string_view why) {
  TimedLock lock(mu_);
  sink_.add(Meta{nlohmann::json{{"allocator_history", {{"status", "unavailable"}, {"reason", std::string(why)}}}}.dump()});
}

}  // namespace streamhaz::tracer
