#include "streamhaz/trace/step_pattern.h"

namespace streamhaz::trace {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

}  // namespace

bool step_token(const Record& r, StepToken& out) {
  const uint64_t key = mix(0, r.index());
  if (const auto* n = std::get_if<Nccl>(&r)) {
    out = {mix(mix(mix(mix(key, static_cast<uint64_t>(n->kind)), n->count), n->comm), static_cast<uint64_t>(n->peer)),
           false};
    return true;
  }
  if (const auto* ss = std::get_if<StreamSync>(&r)) {
    out = {mix(key, ss->stream), true};
    return true;
  }
  if (std::holds_alternative<DeviceSync>(r) || std::holds_alternative<EventSync>(r)) {
    out = {key, true};
    return true;
  }
  return false;
}

uint64_t with_call_site(uint64_t key, CallsiteId callsite) { return mix(key, callsite); }

}  // namespace streamhaz::trace
