#include "streamhaz/tracer/stack_table.h"

#include <algorithm>

namespace streamhaz::tracer {

using namespace streamhaz::trace;

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// The 128-bit product's halves folded: a full-avalanche step (as in wyhash's mum).
uint64_t fold_multiply(uint64_t a, uint64_t b) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return uint64_t(p) ^ uint64_t(p >> 64);
}

// Two lanes of different seeds and multipliers: a stack's 128-bit hash.
std::pair<uint64_t, uint64_t> stack_hash(std::span<const RawFrame> frames) {
  uint64_t a = 0x243f6a8885a308d3ull ^ frames.size(), b = 0x13198a2e03707344ull ^ (frames.size() << 32);
  for (const RawFrame& f : frames) {
    const uint64_t detail = uint64_t(f.detail) ^ (uint64_t(f.kind) << 60);
    a = fold_multiply(a ^ f.key, 0xa0761d6478bd642full) ^ fold_multiply(detail ^ f.check, 0xe7037ed1a0b428dbull);
    b = fold_multiply(b ^ f.key, 0x8ebc6af09c88c6e3ull) ^ fold_multiply(detail ^ b, 0x589965cc75374cc3ull) ^ f.check;
  }
  return {a, b};
}

}  // namespace

size_t StackTable::FrameHash::operator()(const RawFrame& f) const {
  return mix(mix(f.key, uint64_t(f.detail)), f.check ^ uint64_t(f.kind));
}

StackTable::StackSlot& StackTable::slot_of(uint64_t a, uint64_t b) {
  const size_t mask = stack_slots_.size() - 1;
  for (size_t i = size_t(a) & mask;; i = (i + 1) & mask) {
    StackSlot& s = stack_slots_[i];
    if (s.id == 0 || (s.a == a && s.b == b)) return s;
  }
}

void StackTable::grow_stacks() {
  std::vector<StackSlot> old(stack_slots_.size() * 2);
  old.swap(stack_slots_);
  for (const StackSlot& s : old)
    if (s.id != 0) slot_of(s.a, s.b) = s;
}

CallsiteId StackTable::intern(std::span<const RawFrame> frames, StackSource& source) {
  if (frames.empty()) return 0;
  const auto [a, b] = stack_hash(frames);
  if (const StackSlot& known = slot_of(a, b); known.id != 0) return known.id;
  if (callsites_.size() + frames.size() > max_callsites_) {
    ++refused_;
    return 0;
  }
  // Outermost first: each call site's parent is defined before it.
  CallsiteId site = 0;
  for (size_t i = frames.size(); i-- > 0;) site = callsite(site, frame_id(frames[i], source));
  if (site == 0) return 0;
  // Kept at most half full, so that probes stay short and an empty slot always ends them.
  if (2 * (stack_count_ + 1) > stack_slots_.size()) grow_stacks();
  slot_of(a, b) = StackSlot{a, b, site};
  ++stack_count_;
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
