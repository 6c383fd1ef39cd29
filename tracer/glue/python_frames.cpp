#include "python_frames.h"
#include "streamhaz/tracer/hot_path.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstring>

namespace streamhaz::tracer::glue {
namespace {

const char* load_ptr(const void* base, size_t offset) {
  const char* p;
  std::memcpy(&p, static_cast<const char*>(base) + offset, sizeof p);
  return p;
}
const void* type_of(const void* object) { return load_ptr(object, 8); }  // ob_type: stable ABI

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

}  // namespace

bool PythonFrames::attach(std::string& why_not) {
  const auto* hexversion = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));
  if (!hexversion) {
    why_not = dlsym(RTLD_DEFAULT, "Py_GetVersion") ? "CPython before 3.11" : "no CPython in this process";
    return false;
  }
  hexversion_ = *hexversion;
  const unsigned long minor = (hexversion_ >> 16) & 0xFF, major = hexversion_ >> 24;
  // From each version's Include/cpython/pystate.h, Include/internal/pycore_frame.h,
  // Include/cpython/code.h and unicodeobject.h, x86-64 and aarch64 (LP64); checked by
  // tests/tracer/python_frames_probe.py against the interpreter that runs it.
  if (major == 3 && minor == 12) {
    layout_ = Layout{56, 0, 0, 8, 56, 70, 3, 112, 128, 32, 40, 56};
  } else if (major == 3 && minor == 11) {
    // 3.11: _PyCFrame starts with use_tracing, the frame with f_func..f_locals, no frame is
    // owned by the C stack (no entry shims), and str objects still carry wstr fields.
    layout_ = Layout{56, 8, 32, 48, 56, 69, kNoOwner, 112, 128, 32, 48, 72};
  } else {
    why_not = "CPython " + version() + " (Python frames are read for 3.11 and 3.12)";
    return false;
  }
  code_type_ = dlsym(RTLD_DEFAULT, "PyCode_Type");
  unicode_type_ = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  this_thread_state_ = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  addr2line_ = reinterpret_cast<int (*)(void*, int)>(dlsym(RTLD_DEFAULT, "PyCode_Addr2Line"));
  if (!code_type_ || !unicode_type_ || !this_thread_state_ || !addr2line_) {
    why_not = "CPython " + version() + " without the symbols we need";
    return false;
  }
  // tp_basicsize (after ob_refcnt, ob_type, ob_size, tp_name) is where a code object's bytecode starts.
  int64_t basicsize;
  std::memcpy(&basicsize, static_cast<const char*>(code_type_) + 32, sizeof basicsize);
  if (basicsize <= 0 || basicsize > 4096) {
    why_not = "CPython " + version() + " with an unexpected code object layout";
    return false;
  }
  code_units_ = size_t(basicsize);
  attached_ = true;
  return true;
}

std::string PythonFrames::version() const {
  return std::to_string(hexversion_ >> 24) + "." + std::to_string((hexversion_ >> 16) & 0xFF) + "." +
         std::to_string((hexversion_ >> 8) & 0xFF);
}

STREAMHAZ_HOT size_t PythonFrames::capture(RawFrame* out, size_t max) const {
  if (!attached_) return 0;
  const void* tstate = this_thread_state_();  // thread-specific storage: no GIL needed
  if (!tstate) return 0;
  const char* cframe = load_ptr(tstate, layout_.tstate_cframe);
  if (!cframe) return 0;
  const char* frame = load_ptr(cframe, layout_.cframe_current);
  size_t n = 0;
  for (int guard = 0; frame && n < max && guard < 4096; ++guard) {
    const unsigned char owner = static_cast<unsigned char>(frame[layout_.frame_owner]);
    const char* code = load_ptr(frame, layout_.frame_code);
    if (owner != layout_.owner_cstack && code && type_of(code) == code_type_) {
      const char* instr = load_ptr(frame, layout_.frame_instr);
      const char* first = code + code_units_;
      const int64_t units = instr >= first ? (instr - first) / 2 : -1;  // -1: not started
      out[n++] = RawFrame{trace::FrameKind::Python, reinterpret_cast<uint64_t>(code), units,
                          reinterpret_cast<uint64_t>(load_ptr(code, layout_.code_filename))};
    }
    frame = load_ptr(frame, layout_.frame_previous);
  }
  return n;
}

PythonFrameInfo PythonFrames::describe(const RawFrame& f) const {
  PythonFrameInfo info;
  const void* code = reinterpret_cast<const void*>(f.key);
  info.file = text_of(load_ptr(code, layout_.code_filename));
  info.function = text_of(load_ptr(code, layout_.code_qualname));
  // Reads the code's line table only; -1 gives the first line.
  const int line = addr2line_(const_cast<void*>(code), f.detail < 0 ? -1 : int(f.detail * 2));
  info.line = line > 0 ? uint32_t(line) : 0;
  return info;
}

// A str object's text as UTF-8, from its compact representation (what code objects hold).
std::string PythonFrames::text_of(const void* str) const {
  if (!str || type_of(str) != unicode_type_) return "?";
  int64_t length;
  std::memcpy(&length, static_cast<const char*>(str) + 16, sizeof length);
  uint32_t state;
  std::memcpy(&state, static_cast<const char*>(str) + layout_.unicode_state, sizeof state);
  const unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (!compact || length < 0 || length > 4096) return "?";
  const char* base = static_cast<const char*>(str);
  if (ascii) return std::string(base + layout_.ascii_data, size_t(length));
  std::string out;
  const char* data = base + layout_.compact_data;
  for (int64_t i = 0; i < length; ++i) {
    uint32_t c = 0;
    if (kind == 1) c = static_cast<unsigned char>(data[i]);
    else if (kind == 2) { uint16_t u; std::memcpy(&u, data + 2 * i, 2); c = u; }
    else if (kind == 4) std::memcpy(&c, data + 4 * i, 4);
    else return "?";
    append_utf8(out, c);
  }
  return out;
}

}  // namespace streamhaz::tracer::glue
