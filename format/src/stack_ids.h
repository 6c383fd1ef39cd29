// Validation of the call-stack records of one file: every id is defined before it is used, and
// a call site keeps the parent and frame it was first defined with (so the call-site tree can
// have no cycle, and walking a stack always ends).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::trace::detail {

// Ids the tracer hands out are dense: a bit vector for the usual ones, a hash set beyond.
class IdSet {
 public:
  bool contains(uint32_t id) const {
    return id < dense_.size() ? dense_[id] : sparse_.count(id) != 0;
  }
  void insert(uint32_t id) {
    if (id < kDenseLimit) {
      if (id >= dense_.size()) dense_.resize(std::max<size_t>(id + 1, dense_.size() * 2), false);
      dense_[id] = true;
    } else {
      sparse_.insert(id);
    }
  }

 private:
  static constexpr uint32_t kDenseLimit = 1u << 24;
  std::vector<bool> dense_;
  std::unordered_set<uint32_t> sparse_;
};

class StackIdCheck {
 public:
  // Throws a plain string (the reader adds file and offset) for a record that breaks the rules.
  void check(const Record& r) {
    if (const auto* f = std::get_if<FrameDef>(&r)) {
      nonzero("frame", f->id);
      if (f->module && !modules_.contains(f->module))
        throw "frame " + std::to_string(f->id) + " names module " + std::to_string(f->module) + ", which is not defined before it";
      frames_.insert(f->id);
    } else if (const auto* m = std::get_if<ModuleDef>(&r)) {
      nonzero("module", m->id);
      modules_.insert(m->id);
    } else if (const auto* c = std::get_if<CallsiteDef>(&r)) {
      nonzero("call site", c->id);
      if (c->parent && !callsites_.contains(c->parent))
        throw "call site " + std::to_string(c->id) + " names parent call site " + std::to_string(c->parent) +
            ", which is not defined before it";
      if (!c->frame || !frames_.contains(c->frame))
        throw "call site " + std::to_string(c->id) + " names frame " + std::to_string(c->frame) +
            ", which is not defined before it";
      const uint64_t def = uint64_t(c->parent) << 32 | c->frame;
      auto [it, inserted] = callsite_defs_.try_emplace(c->id, def);
      if (!inserted && it->second != def)
        throw "call site " + std::to_string(c->id) + " is defined twice, differently";
      callsites_.insert(c->id);
    } else if (const auto* s = std::get_if<StackRef>(&r)) {
      if (s->callsite && !callsites_.contains(s->callsite))
        throw "stack of seq " + std::to_string(s->seq) + " names call site " + std::to_string(s->callsite) +
            ", which is not defined before it";
    }
  }

 private:
  static void nonzero(const char* what, uint32_t id) {
    if (id == 0) throw std::string(what) + " id 0 is reserved for \"none\"";
  }
  IdSet frames_, modules_, callsites_;
  std::unordered_map<CallsiteId, uint64_t> callsite_defs_;  // parent << 32 | frame
};

}  // namespace streamhaz::trace::detail
