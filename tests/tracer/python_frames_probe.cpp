// A shared library for tests/tracer/python_frames_probe.py: the tracer's Python frame reader,
// called from Python through ctypes, which releases the GIL around the call as PyTorch does
// around its operators. Writes the calling thread's frames as "file:line function" lines.
#include <cstdio>
#include <cstring>
#include <string>

#include "python_frames.h"

using streamhaz::tracer::RawFrame;
using streamhaz::tracer::glue::PythonFrames;

namespace {
PythonFrames& frames() {
  static PythonFrames f;
  return f;
}
}  // namespace

// 1 and the frames (innermost first) in `out`, or 0 and why no frames can be read.
extern "C" int streamhaz_probe_python_frames(char* out, size_t size) {
  static std::string why;
  static const bool attached = frames().attach(why);
  std::string text;
  if (!attached) {
    text = why;
  } else {
    RawFrame raw[64];
    const size_t n = frames().capture(raw, 64);
    for (size_t i = 0; i < n; ++i) {
      const auto info = frames().describe(raw[i]);
      text += info.file + ":" + std::to_string(info.line) + " " + info.function + "\n";
    }
  }
  std::snprintf(out, size, "%s", text.c_str());
  return attached ? 1 : 0;
}
