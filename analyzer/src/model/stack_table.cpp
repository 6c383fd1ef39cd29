#include "model/stack_table.h"

#include "symbols/native_symbolizer.h"

namespace streamhaz::analysis {

void StackTable::add(const trace::Record& r) {
  if (const auto* s = std::get_if<trace::StringDef>(&r)) strings_[s->id] = s->text;
  else if (const auto* m = std::get_if<trace::ModuleDef>(&r)) modules_[m->id] = *m;
  else if (const auto* f = std::get_if<trace::FrameDef>(&r)) frames_[f->id] = *f;
  else if (const auto* c = std::get_if<trace::CallsiteDef>(&r)) callsites_[c->id] = *c;
}

const std::string& StackTable::text(trace::StringId id) const {
  static const std::string none;
  auto it = strings_.find(id);
  return it != strings_.end() ? it->second : none;
}

StackFrame StackTable::frame(trace::FrameId id, NativeSymbolizer* symbolizer) const {
  if (auto it = resolved_.find(id); it != resolved_.end()) return it->second;
  StackFrame out;
  if (auto it = frames_.find(id); it != frames_.end()) {
    const trace::FrameDef& f = it->second;
    out.kind = f.kind;
    out.file = text(f.file);
    out.function = text(f.function);
    out.line = f.line;
    out.offset = f.offset;
    if (auto m = modules_.find(f.module); m != modules_.end()) {
      out.module = text(m->second.path);
      // Native frames carry no source location in the trace: look it up in the module's file.
      if (f.kind == trace::FrameKind::Native && out.file.empty() && symbolizer) {
        if (auto loc = symbolizer->lookup(out.module, text(m->second.build_id), f.offset)) {
          out.function = loc->function;
          out.file = loc->file;
          out.line = loc->line;
        }
      }
    }
  }
  resolved_.emplace(id, out);
  return out;
}

Stack StackTable::resolve(trace::CallsiteId id, NativeSymbolizer* symbolizer) const {
  Stack stack;
  // The reader refuses call sites whose parent is not defined before them, so the chain ends;
  // the depth cap bounds the work on a hostile file all the same.
  while (id && stack.size() < kMaxDepth) {
    auto it = callsites_.find(id);
    if (it == callsites_.end()) break;
    stack.push_back(frame(it->second.frame, symbolizer));
    id = it->second.parent;
  }
  return stack;
}

}  // namespace streamhaz::analysis
