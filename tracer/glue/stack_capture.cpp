#include "stack_capture.h"

#include <algorithm>
#include <atomic>

#include "streamhaz/tracer/hot_path.h"
#include "streamhaz/tracer/per_thread.h"
#include "streamhaz/tracer/self_profile.h"

namespace streamhaz::tracer::glue {
namespace {

// Native frames: at most this many of the program's own, innermost first. Origins (allocation,
// stream creation) keep fewer: their Python frames follow.
constexpr size_t kNativeFrames = 24;
constexpr size_t kOriginNativeFrames = 12;

struct PreparedFrames {
  RawFrame frames[kNativeFrames];
  size_t count = 0;
  bool ready = false;
};

std::atomic<StackCapture*> the_capture{nullptr};

}  // namespace

StackCapture* stack_capture() { return the_capture.load(std::memory_order_acquire); }
void set_stack_capture(StackCapture* capture) { the_capture.store(capture, std::memory_order_release); }

StackCapture::StackCapture(Stacks mode) : mode_(mode) {
  std::string why;
  python_status_ = python_.attach(why) ? "CPython " + python_.version() : why;
  modules_.refresh();
}

void StackCapture::prepare(StackNeed need) {
  clear();
  RawFrame probe;
  const bool python = python_.capture(&probe, 1) > 0;
  const bool native = need == StackNeed::Origin ||
                      (!python && (need != StackNeed::KernelLaunch || mode_ == Stacks::All));
  if (!native) return;
  const size_t max = need == StackNeed::Origin && python ? kOriginNativeFrames : kNativeFrames;
  PreparedFrames& prepared = PerThread<PreparedFrames>::get();  // made by the thread's first native walk
  PhaseTimer timer(Phase::NativeUnwind);
  prepared.count = unwind_program_frames(modules_, prepared.frames, max);
  prepared.ready = true;
}

void StackCapture::clear() {
  if (PreparedFrames* prepared = PerThread<PreparedFrames>::find()) prepared->ready = false;
}

STREAMHAZ_HOT size_t StackCapture::capture(StackNeed need, RawFrame* out, size_t max) {
  size_t n = 0;
  const PreparedFrames* prepared = PerThread<PreparedFrames>::find();  // none: nothing prepared
  auto take_native = [&] {
    if (!prepared || !prepared->ready) return;
    const size_t k = std::min(prepared->count, max - n);
    std::copy(prepared->frames, prepared->frames + k, out + n);
    n += k;
  };
  if (need == StackNeed::Origin) take_native();  // the library that called CUDA, innermost
  size_t python;
  {
    PhaseTimer timer(Phase::PythonFrames);
    python = python_.capture(out + n, max - n);
  }
  n += python;
  if (need != StackNeed::Origin && python == 0) take_native();
  return n;
}

}  // namespace streamhaz::tracer::glue
