#include "streamhaz/report/stack_text.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace streamhaz::report {
namespace {

using analysis::StackFrame;

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// `part` in `path` at the start or right after a '/': "deepspeed/comm/" matches
// "/venv/site-packages/deepspeed/comm/torch.py" and a prefix-mapped "site/deepspeed/comm/torch.py",
// not "mydeepspeed/comm/x.py".
bool in_path(const std::string& path, const char* part) {
  for (size_t at = path.find(part); at != std::string::npos; at = path.find(part, at + 1))
    if (at == 0 || path[at - 1] == '/') return true;
  return false;
}

// Frames a finding looks past: torch, and libraries' thin wrappers of torch whose frames sit
// between the user's line and torch on every collective or synchronisation (the line to change is
// their caller's). Rows name whole files or folders, as no function of those listed that issues
// CUDA work does more than forward it. The first row that matches decides; frames no row matches
// are classified by frame_origin() below (user, site-packages library, standard library, system).
enum class Match {
  InPath,          // Python: the file's path; native: the module's path (in_path())
  ModulePrefix,    // native: the module's file name starts with it
};
struct PassThrough {
  trace::FrameKind kind;
  Match match;
  const char* pattern;
  FrameOrigin origin;    // Torch or Wrapper
  const char* label;     // for folded runs: "[3 frames in deepspeed.comm]"
};
constexpr PassThrough kPassThrough[] = {
    // torch itself, its Python package (torch.distributed's own wrappers distributed_c10d.py and
    // c10d_logger.py, torch.cuda, torch.nn...) and its native libraries.
    {trace::FrameKind::Python, Match::InPath, "torch/", FrameOrigin::Torch, "torch"},
    {trace::FrameKind::Native, Match::ModulePrefix, "libtorch", FrameOrigin::Torch, "torch"},
    {trace::FrameKind::Native, Match::ModulePrefix, "libc10", FrameOrigin::Torch, "torch"},
    {trace::FrameKind::Native, Match::InPath, "torch/", FrameOrigin::Torch, "torch"},  // torch/lib/*.so
    // DeepSpeed's torch.distributed facade: deepspeed.comm's all_reduce and friends (comm.py, with
    // its timed_op logging decorator) call TorchBackend (torch.py), which calls torch.distributed.
    // Every collective DeepSpeed issues passes through it, and PyTorch's stream pool is first
    // created and used inside it.
    {trace::FrameKind::Python, Match::InPath, "deepspeed/comm/", FrameOrigin::Wrapper, "deepspeed.comm"},
    // DeepSpeed's accelerator abstraction: get_accelerator().synchronize(), .Stream(),
    // .current_stream(), .stream()... are one-line wrappers of torch.cuda (cuda_accelerator.py).
    {trace::FrameKind::Python, Match::InPath, "deepspeed/accelerator/", FrameOrigin::Wrapper, "deepspeed.accelerator"},
    // @instrument_w_nvtx: its wrapped_fn pushes an NVTX range around the decorated DeepSpeed
    // function (whose own frame, the caller, is the one that matters); _range_push and _range_pop
    // forward to the accelerator.
    {trace::FrameKind::Python, Match::InPath, "deepspeed/utils/nvtx.py", FrameOrigin::Wrapper, "deepspeed.utils.nvtx"},
};

const PassThrough* pass_through(const StackFrame& f) {
  const std::string& path = f.kind == trace::FrameKind::Python ? f.file : f.module;
  for (const PassThrough& p : kPassThrough) {
    if (p.kind != f.kind) continue;
    const bool where = p.match == Match::InPath ? in_path(path, p.pattern) : starts_with(base_name(path), p.pattern);
    if (where) return &p;
  }
  return nullptr;
}

const char* origin_label(FrameOrigin o) {
  switch (o) {
    case FrameOrigin::Torch: return "torch";
    case FrameOrigin::PythonStdlib: return "the Python standard library";
    case FrameOrigin::System: return "CUDA and system libraries";
    default: return "libraries";
  }
}

// Consecutive hidden frames of one group fold into one line; torch and the wrappers of torch are
// one group ("[4 frames in torch, deepspeed.comm]").
FrameOrigin fold_group(FrameOrigin o) { return o == FrameOrigin::Wrapper ? FrameOrigin::Torch : o; }

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
  if (const PassThrough* p = pass_through(f)) return p->origin;
  if (f.kind == trace::FrameKind::Python) {
    const std::string& p = f.file;
    if (starts_with(p, "<")) return FrameOrigin::PythonStdlib;  // <frozen importlib._bootstrap>, <string>
    if (contains(p, "site-packages/") || contains(p, "dist-packages/")) return FrameOrigin::Library;
    if (contains(p, "/lib/python3") || contains(p, "/lib/python2")) return FrameOrigin::PythonStdlib;
    return FrameOrigin::User;
  }
  const std::string base = base_name(f.module);
  if (starts_with(base, "libpython") || starts_with(base, "python3") || starts_with(base, "python"))
    return FrameOrigin::PythonStdlib;
  for (const char* system : {"libcudart", "libcuda.", "libnccl", "libcublas", "libcudnn", "libc.so", "libc-",
                             "libstdc++", "libgcc_s", "ld-linux", "libpthread", "libdl", "libstreamhaz"})
    if (starts_with(base, system)) return FrameOrigin::System;
  return f.module.empty() ? FrameOrigin::System : FrameOrigin::User;
}

bool hidden_by_default(FrameOrigin o) {
  return o == FrameOrigin::Torch || o == FrameOrigin::Wrapper || o == FrameOrigin::PythonStdlib ||
         o == FrameOrigin::System;
}

const char* fold_label(const StackFrame& f) {
  if (const PassThrough* p = pass_through(f)) return p->label;
  return origin_label(frame_origin(f));
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
  const StackFrame* wrapper = nullptr;
  for (const StackFrame& f : stack) {
    const FrameOrigin o = frame_origin(f);
    if (o == FrameOrigin::Wrapper && !wrapper) wrapper = &f;
    if (!hidden_by_default(o)) return &f;
  }
  return wrapper;
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
    std::vector<std::string> labels;  // in the order they first appear in the run
    for (; j < stack.size() && fold_group(frame_origin(stack[j])) == fold_group(o); ++j)
      if (std::string label = fold_label(stack[j]); std::find(labels.begin(), labels.end(), label) == labels.end())
        labels.push_back(std::move(label));
    lines.push_back(fmt::format("[{} {} in {}]", j - i, j - i == 1 ? "frame" : "frames", fmt::join(labels, ", ")));
    i = j;
  }
  return lines;
}

}  // namespace streamhaz::report
