// A launch's parameter bytes through a kernel summary: pointer values and extents.
#include <cstring>

#include "footprints/kernel_summary.h"

namespace streamhaz::analysis {

namespace {

// Little-endian integer of `size` bytes at `offset`; nullopt outside the buffer.
std::optional<uint64_t> read_raw(std::string_view bytes, uint64_t offset, uint64_t size) {
  if (offset > bytes.size() || size > bytes.size() - offset || size > 8) return std::nullopt;
  uint64_t v = 0;
  for (uint64_t i = 0; i < size; ++i) v |= uint64_t(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return v;
}

// An integer parameter's value as a count: negative values are unknown (a kernel comparing a
// signed index against a negative count does nothing, but one comparing unsigned runs far).
std::optional<uint64_t> param_count(const ParamSummary& p, std::string_view bytes) {
  if (!p.integer || !p.offset || !p.size) return std::nullopt;
  std::optional<uint64_t> raw = read_raw(bytes, *p.offset, *p.size);
  if (!raw) return std::nullopt;
  if (p.is_signed && *p.size < 8 && (*raw >> (8 * *p.size - 1)) & 1) return std::nullopt;
  if (p.is_signed && *p.size == 8 && (*raw >> 63)) return std::nullopt;
  return raw;
}

std::optional<uint64_t> eval_node(const KernelSummary& k, const Extent& e, uint32_t at, std::string_view bytes) {
  const ExtentNode& n = e.nodes[at];
  switch (n.kind) {
    case ExtentNode::Kind::Const:
      return n.value;
    case ExtentNode::Kind::Param:
      return n.value < k.params.size() ? param_count(k.params[n.value], bytes) : std::nullopt;
    case ExtentNode::Kind::Mul:
    case ExtentNode::Kind::Add: {
      if (n.lhs >= at || n.rhs >= at) return std::nullopt;  // children come first
      std::optional<uint64_t> a = eval_node(k, e, n.lhs, bytes), b = eval_node(k, e, n.rhs, bytes);
      if (!a || !b) return std::nullopt;
      uint64_t r;
      bool overflow = n.kind == ExtentNode::Kind::Mul ? __builtin_mul_overflow(*a, *b, &r)
                                                      : __builtin_add_overflow(*a, *b, &r);
      if (overflow) return std::nullopt;  // saturated: the rest of the allocation
      return r;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> evaluate_extent(const KernelSummary& kernel, const Extent& extent,
                                        std::string_view param_bytes) {
  if (extent.nodes.empty()) return std::nullopt;
  return eval_node(kernel, extent, static_cast<uint32_t>(extent.nodes.size() - 1), param_bytes);
}

std::vector<KernelRange> evaluate(const KernelSummary& kernel, std::string_view param_bytes,
                                  EvaluateStatus* status) {
  std::vector<KernelRange> out;
  auto say = [&](EvaluateStatus s) {
    if (status) *status = s;
  };
  if (!kernel.layout_known()) {
    say(EvaluateStatus::LayoutUnknown);
    return out;
  }
  for (const ParamSummary& p : kernel.params) {
    if (*p.offset > param_bytes.size() || *p.size > param_bytes.size() - *p.offset) {
      say(EvaluateStatus::ParamsTooShort);
      return out;
    }
  }
  for (const ParamSummary& p : kernel.params) {
    if (!p.pointer || !p.accessed) continue;
    uint64_t ptr = *read_raw(param_bytes, *p.offset, 8);
    if (ptr == 0) continue;  // a null pointer is never dereferenced by a kernel that runs
    KernelRange r{ptr, std::nullopt, p.mode};
    if (p.extent && p.pointee_bytes) {
      std::optional<uint64_t> elements = evaluate_extent(kernel, *p.extent, param_bytes);
      uint64_t bytes;
      if (elements && !__builtin_mul_overflow(*elements, *p.pointee_bytes, &bytes))
        r.bytes = bytes <= UINT64_MAX - ptr ? bytes : UINT64_MAX - ptr;  // clipped at 2^64
    }
    out.push_back(r);
  }
  say(EvaluateStatus::Ok);
  return out;
}

}  // namespace streamhaz::analysis
