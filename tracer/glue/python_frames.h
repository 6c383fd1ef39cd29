// The calling thread's Python frames, read in place from the interpreter's own structures.
//
// PyTorch releases the GIL around every operator (its generated bindings do), so the CUDA
// calls we trace almost never come from a thread holding it, and the C API calls that walk
// frames (PyThreadState_GetFrame...) need it and allocate. What is safe without it: the
// calling thread's own frame chain, which nothing changes while the thread is out in C code.
// We read it through the layout of the running interpreter's version (checked against that
// version's headers on a GPU host), look symbols up at run time (no build dependency on
// Python), never take the GIL, never allocate a Python object and never touch a refcount.
// Versions without a known layout get no Python frames (and the trace says so).
#pragma once

#include <cstddef>
#include <string>

#include "streamhaz/tracer/stack_table.h"

namespace streamhaz::tracer::glue {

class PythonFrames {
 public:
  // Finds the interpreter in this process; false (and why) where there is none we can read.
  bool attach(std::string& why_not);
  bool attached() const { return attached_; }
  std::string version() const;

  // The calling thread's frames, innermost first (0 when the thread runs no Python).
  size_t capture(RawFrame* out, size_t max) const;
  PythonFrameInfo describe(const RawFrame& f) const;

 private:
  struct Layout {
    size_t tstate_cframe;    // PyThreadState.cframe
    size_t cframe_current;   // _PyCFrame.current_frame
    size_t frame_code;       // _PyInterpreterFrame.f_code
    size_t frame_previous;   // .previous
    size_t frame_instr;      // .prev_instr
    size_t frame_owner;      // .owner (char)
    unsigned char owner_cstack;  // FRAME_OWNED_BY_CSTACK: the eval loop's entry shim (3.12)
    size_t code_filename;    // PyCodeObject.co_filename
    size_t code_qualname;    // .co_qualname
    size_t unicode_state;    // PyASCIIObject.state
    size_t ascii_data;       // sizeof(PyASCIIObject): where compact ASCII text starts
    size_t compact_data;     // sizeof(PyCompactUnicodeObject): other compact text
  };
  static constexpr unsigned char kNoOwner = 0xFF;  // a version without C-stack frames
  std::string text_of(const void* str) const;

  bool attached_ = false;
  unsigned long hexversion_ = 0;
  Layout layout_{};
  size_t code_units_ = 0;  // offset of the bytecode in a code object (the type's tp_basicsize)
  const void* code_type_ = nullptr;
  const void* unicode_type_ = nullptr;
  void* (*this_thread_state_)() = nullptr;  // PyGILState_GetThisThreadState
  int (*addr2line_)(void*, int) = nullptr;  // PyCode_Addr2Line
};

}  // namespace streamhaz::tracer::glue
