#include "streamhaz/report/stack_text.h"

#include <fmt/format.h>

namespace streamhaz::report {
namespace {

using analysis::StackFrame;

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

const char* fold_label(FrameOrigin o) {
  switch (o) {
    case FrameOrigin::Torch: return "torch";
    case FrameOrigin::PythonStdlib: return "the Python standard library";
    case FrameOrigin::System: return "CUDA and system libraries";
    default: return "libraries";
  }
}

std::string location(const StackFrame& f, const std::string& file) {
  std::string text = file;
  if (f.line) text += fmt::format(":{}", f.line);
  if (!f.function.empty()) text += (text.empty() ? "" : " in ") + f.function;
  return text;
}

std::string module_offset(const StackFrame& f) {
  return fmt::format("{}+{:#x}", f.module.empty() ? std::string("[unknown module]") : base_name(f.module), f.offset);
}

}  // namespace

FrameOrigin frame_origin(const StackFrame& f) {
  if (f.kind == trace::FrameKind::Python) {
    const std::string& p = f.file;
    if (starts_with(p, "torch/") || contains(p, "/torch/")) return FrameOrigin::Torch;
    if (starts_with(p, "<")) return FrameOrigin::PythonStdlib;  // <frozen importlib._bootstrap>, <string>
    if (contains(p, "site-packages/") || contains(p, "dist-packages/")) return FrameOrigin::Library;
    if (contains(p, "/lib/python3") || contains(p, "/lib/python2")) return FrameOrigin::PythonStdlib;
    return FrameOrigin::User;
  }
  const std::string base = base_name(f.module);
  if (starts_with(base, "libtorch") || starts_with(base, "libc10") || contains(f.module, "/torch/"))
    return FrameOrigin::Torch;
  if (starts_with(base, "libpython") || starts_with(base, "python3") || starts_with(base, "python"))
    return FrameOrigin::PythonStdlib;
  for (const char* system : {"libcudart", "libcuda.", "libnccl", "libcublas", "libcudnn", "libc.so", "libc-",
                             "libstdc++", "libgcc_s", "ld-linux", "libpthread", "libdl", "libstreamhaz"})
    if (starts_with(base, system)) return FrameOrigin::System;
  return f.module.empty() ? FrameOrigin::System : FrameOrigin::User;
}

bool hidden_by_default(FrameOrigin o) {
  return o == FrameOrigin::Torch || o == FrameOrigin::PythonStdlib || o == FrameOrigin::System;
}

std::string short_path(const std::string& path) {
  for (const char* marker : {"site-packages/", "dist-packages/"})
    if (size_t at = path.rfind(marker); at != std::string::npos) return path.substr(at + std::string(marker).size());
  return path;
}

std::string frame_text(const StackFrame& f) {
  if (f.kind == trace::FrameKind::Python) return location(f, short_path(f.file));
  const std::string where = location(f, f.file);
  return where.empty() ? module_offset(f) : fmt::format("{} ({})", where, module_offset(f));
}

std::string frame_brief(const StackFrame& f) {
  if (f.kind == trace::FrameKind::Native && f.file.empty() && f.function.empty()) return module_offset(f);
  return location(f, base_name(f.file));
}

const StackFrame* innermost_user_frame(const analysis::Stack& stack) {
  for (const StackFrame& f : stack)
    if (!hidden_by_default(frame_origin(f))) return &f;
  return nullptr;
}

std::vector<std::string> stack_lines(const analysis::Stack& stack, bool full, size_t max_shown) {
  std::vector<std::string> lines;
  size_t shown = 0;
  for (size_t i = 0; i < stack.size();) {
    const FrameOrigin o = frame_origin(stack[i]);
    if (full || !hidden_by_default(o)) {
      if (!full && shown == max_shown) {
        lines.push_back(fmt::format("[{} more frames]", stack.size() - i));
        break;
      }
      lines.push_back(fmt::format("#{} {}", i, frame_text(stack[i])));
      ++shown;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < stack.size() && frame_origin(stack[j]) == o) ++j;
    lines.push_back(fmt::format("[{} {} in {}]", j - i, j - i == 1 ? "frame" : "frames", fold_label(o)));
    i = j;
  }
  return lines;
}

}  // namespace streamhaz::report
