// The tracer's StackSource: Python frames where the calling thread runs Python, native return
// addresses elsewhere (STREAMHAZ_STACKS says which records pay for native unwinding).
//
// Native frames are unwound by the entry point before it reaches the recorder (StackScope),
// because unwinding may take the dynamic loader's lock and the recorder's lock must never be
// held around it; the recorder then asks capture() under its lock, which reads Python frames
// (plain memory reads) and hands over the unwound addresses.
#pragma once

#include <string>

#include "native_frames.h"
#include "python_frames.h"
#include "streamhaz/tracer/settings.h"
#include "streamhaz/tracer/stack_table.h"

namespace streamhaz::tracer::glue {

class StackCapture final : public StackSource {
 public:
  explicit StackCapture(Stacks mode);
  // What the trace header says about stacks: {"mode", "python" (version or why none)}.
  std::string python_status() const { return python_status_; }

  // Before an entry point records `need`: unwinds native frames where they will be wanted.
  void prepare(StackNeed need);
  void clear();

  size_t capture(StackNeed need, RawFrame* out, size_t max) override;
  PythonFrameInfo describe_python(const RawFrame& f) override { return python_.describe(f); }
  std::optional<ModuleInfo> module_of(uint64_t pc) override { return modules_.find(pc); }

 private:
  Stacks mode_;
  PythonFrames python_;
  ModuleMap modules_;
  std::string python_status_;
};

// The process's StackCapture, or null when stacks are off (set by the injection at start).
StackCapture* stack_capture();
void set_stack_capture(StackCapture* capture);

// Unwinds for the records an entry point is about to make, and forgets the frames after.
class StackScope {
 public:
  explicit StackScope(StackNeed need) : capture_(stack_capture()) {
    if (capture_) capture_->prepare(need);
  }
  ~StackScope() {
    if (capture_) capture_->clear();
  }
  StackScope(const StackScope&) = delete;
  StackScope& operator=(const StackScope&) = delete;

 private:
  StackCapture* capture_;
};

}  // namespace streamhaz::tracer::glue
