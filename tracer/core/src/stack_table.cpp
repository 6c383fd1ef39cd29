#include "streamhaz/tracer/stack_table.h"

#include <algorithm>

namespace streamhaz::tracer {

using namespace streamhaz::trace;

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t stack_hash(std::span<const RawFrame> frames) {
  uint64_t h = frames.size();
  for (const RawFrame& f : frames) h = mix(mix(h, f.key), uint64_t(f.detail) ^ (uint64_t(f.kind) << 60));
  return h;
}

}  // namespace

size_t StackTable::FrameHash::operator()(const RawFrame& f) const {
  return mix(mix(f.key, uint64_t(f.detail)), f.check ^ uint64_t(f.kind));
}

CallsiteId StackTable::intern(std::span<const RawFrame> frames, StackSource& source) {
  if (frames.empty()) return 0;
  const uint64_t h = stack_hash(frames);
  auto& bucket = stacks_[h];
  for (const Known& k : bucket)
    if (std::equal(k.frames.begin(), k.frames.end(), frames.begin(), frames.end())) return k.id;
  if (callsites_.size() + frames.size() > max_callsites_) {
    ++refused_;
    return 0;
  }
  // Outermost first: each call site's parent is defined before it.
  CallsiteId site = 0;
  for (size_t i = frames.size(); i-- > 0;) site = callsite(site, frame_id(frames[i], source));
  bucket.push_back(Known{std::vector<RawFrame>(frames.begin(), frames.end()), site});
  return site;
}

CallsiteId StackTable::intern_named(std::span<const PythonFrameInfo> frames) {
  if (frames.empty()) return 0;
  if (callsites_.size() + frames.size() > max_callsites_) {
    ++refused_;
    return 0;
  }
  CallsiteId site = 0;
  for (size_t i = frames.size(); i-- > 0;) site = callsite(site, named_frame_id(frames[i]));
  return site;
}

FrameId StackTable::named_frame_id(const PythonFrameInfo& f) {
  std::string key = f.file;
  key += '\0';
  key += f.function;
  key += '\0';
  key += std::to_string(f.line);
  auto [it, added] = named_frames_.try_emplace(std::move(key), 0);
  if (!added) return it->second;
  FrameDef def;
  def.kind = FrameKind::Python;
  def.file = intern_(paths_.apply(f.file));
  def.function = intern_(f.function);
  def.line = f.line;
  def.id = next_frame_++;
  emit_(def);
  it->second = def.id;
  return def.id;
}

FrameId StackTable::frame_id(const RawFrame& f, StackSource& source) {
  if (auto it = frames_.find(f); it != frames_.end()) return it->second;
  FrameDef def;
  def.kind = f.kind;
  if (f.kind == FrameKind::Python) {
    PythonFrameInfo info = source.describe_python(f);
    const RawFrame line_key{f.kind, f.key, int64_t(info.line), f.check};
    if (auto it = python_lines_.find(line_key); it != python_lines_.end()) {
      frames_.emplace(f, it->second);
      return it->second;
    }
    def.file = intern_(paths_.apply(info.file));
    def.function = intern_(info.function);
    def.line = info.line;
    def.id = next_frame_++;
    python_lines_.emplace(line_key, def.id);
  } else {
    uint64_t base = 0;
    def.module = module_id(f.key, source, base);
    def.offset = f.key - base;  // absolute where no module holds the address
    def.id = next_frame_++;
  }
  emit_(def);
  frames_.emplace(f, def.id);
  return def.id;
}

ModuleId StackTable::module_id(uint64_t pc, StackSource& source, uint64_t& base) {
  auto it = std::upper_bound(modules_.begin(), modules_.end(), pc,
                             [](uint64_t p, const Module& m) { return p < m.base; });
  if (it != modules_.begin() && pc < std::prev(it)->end) {
    base = std::prev(it)->base;
    return std::prev(it)->id;
  }
  std::optional<ModuleInfo> info = source.module_of(pc);
  if (!info || pc < info->base || pc - info->base >= info->size) return 0;
  ModuleDef def;
  def.id = static_cast<ModuleId>(modules_.size() + 1);
  def.path = intern_(paths_.apply(info->path));
  def.base = info->base;
  def.size = info->size;
  def.build_id = info->build_id.empty() ? 0 : intern_(info->build_id);
  emit_(def);
  Module m{info->base, info->base + info->size, def.id};
  modules_.insert(std::upper_bound(modules_.begin(), modules_.end(), m.base,
                                   [](uint64_t b, const Module& x) { return b < x.base; }),
                  m);
  base = info->base;
  return def.id;
}

CallsiteId StackTable::callsite(CallsiteId parent, FrameId frame) {
  const uint64_t key = (uint64_t(parent) << 32) | frame;
  auto [it, added] = callsites_.try_emplace(key, static_cast<CallsiteId>(callsites_.size() + 1));
  if (added) emit_(CallsiteDef{it->second, parent, frame});
  return it->second;
}

}  // namespace streamhaz::tracer
