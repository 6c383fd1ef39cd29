// How reports show call stacks: which frames are the user's, one line per frame, and the
// folding of library internals (torch, libraries' thin wrappers of torch such as DeepSpeed's
// communication facade, the Python standard library, CUDA and system libraries) that the text
// report hides unless asked for full stacks.
#pragma once

#include <string>
#include <vector>

#include "streamhaz/analysis/finding.h"
#include "streamhaz/analysis/nvtx_path.h"

namespace streamhaz::report {

enum class FrameOrigin {
  User,          // the program's own code
  Library,       // third-party Python packages (site-packages: deepspeed...) and other native objects
  Torch,         // torch/, torch/_*, libtorch*, libc10*
  Wrapper,       // a library's thin wrapper of torch (deepspeed.comm, deepspeed.accelerator...): its caller
                 // is the line that matters (the table in stack_text.cpp)
  PythonStdlib,  // the Python standard library and interpreter
  System,        // CUDA runtime and driver, NCCL, libc, libstdc++, the tracer
};
FrameOrigin frame_origin(const analysis::StackFrame& f);
bool hidden_by_default(FrameOrigin o);

// "deepspeed/runtime/zero/stage_1_and_2.py" for a file under site-packages; the path as given otherwise.
std::string short_path(const std::string& path);

// "train.py:42 in step"; native: "reduce.cu:88 in launch_reduce (reducer+0x1234)", or
// "libfoo.so+0x1234" where nothing is known. Not escaped.
std::string frame_text(const analysis::StackFrame& f);
// The same with the file's base name only, for one-line summaries ("created at train.py:42 in step").
std::string frame_brief(const analysis::StackFrame& f);

// What a folded run of frames like `f` is called: "torch", "deepspeed.comm", "the Python
// standard library"...
const char* fold_label(const analysis::StackFrame& f);

// The frame a finding points at: the innermost frame of user or library code outside torch and
// the wrappers of the table; where there is none, the innermost wrapper frame; null when every
// frame is torch, the standard library or a system library (callers then name the innermost frame).
const analysis::StackFrame* innermost_user_frame(const analysis::Stack& stack);

// The lines a report prints for a stack, innermost first: "#0 train.py:42 in step", and folded
// runs such as "[3 frames in torch]" (torch and wrapper frames fold together: "[5 frames in torch,
// deepspeed.comm]"). Without `full`, hidden frames are folded and at most `max_shown` frames are
// shown. Not escaped.
std::vector<std::string> stack_lines(const analysis::Stack& stack, bool full, size_t max_shown = 8);

using analysis::nvtx_path;  // NVTX paths without older tracers' "?" segments

}  // namespace streamhaz::report
