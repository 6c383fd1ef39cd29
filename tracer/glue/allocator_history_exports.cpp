// The functions the tracer's Python side (tracer/python/sitecustomize.py) calls through ctypes
// when a PyTorch process with --allocator-history exits.
#include <cstddef>
#include <string>
#include <string_view>

#include "tracer_state.h"

using namespace streamhaz::tracer;
using namespace streamhaz::tracer::glue;

// Returns the allocations recorded, or -1 when the text is malformed or nothing is traced.
extern "C" __attribute__((visibility("default"))) long streamhaz_tracer_allocator_history(const char* text,
                                                                                         size_t bytes) {
  Recorder* rec = early_recorder();
  if (!rec || !text || !settings().allocator_history) return -1;
  try {
    auto parsed = parse_allocator_history(std::string_view(text, bytes));
    if (const auto* why = std::get_if<std::string>(&parsed)) {
      rec->allocator_history_unavailable("the tracer could not read it: " + *why);
      return -1;
    }
    return static_cast<long>(rec->allocator_history(std::get<std::vector<HistoryAllocation>>(parsed)));
  } catch (...) {
    rec->note_dropped();  // out of memory: the program goes on, the trace says it is incomplete
    return -1;
  }
}

extern "C" __attribute__((visibility("default"))) void streamhaz_tracer_allocator_history_unavailable(
    const char* why) {
  Recorder* rec = early_recorder();
  if (!rec || !why || !settings().allocator_history) return;
  try {
    rec->allocator_history_unavailable(why);
  } catch (...) {
    rec->note_dropped();
  }
}

// 1 when this process should record the history: the setting is on and the tracer is enabled.
extern "C" __attribute__((visibility("default"))) int streamhaz_tracer_allocator_history_wanted() {
  return settings().allocator_history && !settings().disabled ? 1 : 0;
}
