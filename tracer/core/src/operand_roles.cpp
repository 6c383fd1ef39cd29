#include "streamhaz/tracer/operand_roles.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace streamhaz::tracer {
namespace {

struct OperandConvention {
  std::string_view mangled_prefix;
  int array_param;
};

constexpr OperandConvention kConventions[] = {
    {"_ZN2at6native29vectorized_elementwise_kernel", 2},
    {"_ZN2at6native27unrolled_elementwise_kernel", 2},
};

// Operand arrays larger than this are not TensorIterator's (it has at most a handful of operands).
constexpr size_t kMaxOperands = 16;

uint64_t word_at(std::string_view bytes, size_t offset) {
  uint64_t w;
  std::memcpy(&w, bytes.data() + offset, 8);
  return w;
}

}  // namespace

int operand_array_param(std::string_view mangled_name) {
  for (const OperandConvention& c : kConventions)
    if (mangled_name.starts_with(c.mangled_prefix)) return c.array_param;
  return -1;
}

namespace {
// Kernels whose parameter `slots_param` starts with an array of input pointers, one per grid
// row: by a part of the mangled name (the cat kernels sit in an anonymous namespace, whose
// mangled name differs per build).
struct SlotsConvention {
  std::string_view mangled_part;
  int slots_param;
};
constexpr SlotsConvention kSlotsConventions[] = {
    {"CatArrayBatchedCopy", 1},  // (output, CatArrInputTensorMetadata inputs, os, concatDim, ...)
};
}  // namespace

int unfilled_slots_param(std::string_view mangled_name) {
  for (const SlotsConvention& c : kSlotsConventions)
    if (mangled_name.find(c.mangled_part) != std::string_view::npos) return c.slots_param;
  return -1;
}

std::pair<size_t, size_t> unfilled_slot_bytes(const std::vector<std::pair<size_t, size_t>>* layout, int slots_param,
                                              uint32_t grid_rows, size_t params_size) {
  if (slots_param < 0 || !layout || static_cast<size_t>(slots_param) >= layout->size()) return {0, 0};
  const auto [offset, size] = (*layout)[slots_param];
  if (offset % 8 != 0 || offset + size > params_size) return {0, 0};
  // The whole parameter past the filled pointers: the slots' sizes, offsets and strides follow the
  // pointer array and are never pointers themselves.
  const size_t filled = static_cast<size_t>(grid_rows) * 8;
  if (filled >= size) return {0, 0};
  return {offset + filled, offset + size};
}

void operand_roles(std::string_view params, const std::vector<std::pair<size_t, size_t>>* layout, int array_param,
                   std::span<const uint64_t> pointers, std::vector<trace::AccessMode>& roles) {
  roles.assign(pointers.size(), trace::AccessMode::ReadWrite);
  if (pointers.empty() || array_param < 0 || !layout || static_cast<size_t>(array_param) >= layout->size()) return;
  const auto [offset, size] = (*layout)[array_param];
  if (size == 0 || size % 8 != 0 || size / 8 > kMaxOperands || offset % 8 != 0 || offset + size > params.size()) return;
  // One pass over the argument words: each that is one of the pointers (in address order, so a
  // binary search finds it) marks where it was seen. A pass per pointer cost more than the scan
  // that found them on an elementwise launch with offset calculators (some 160 words).
  enum : uint8_t { kOutput = 1, kInput = 2, kElsewhere = 4 };
  std::array<uint8_t, 64> small{};
  std::vector<uint8_t> large;
  uint8_t* seen = small.data();
  if (pointers.size() > small.size()) {
    large.assign(pointers.size(), 0);
    seen = large.data();
  }
  const uint64_t lowest = pointers.front(), highest = pointers.back();
  for (size_t off = 0; off + 8 <= params.size(); off += 8) {
    const uint64_t w = word_at(params, off);
    if (w < lowest || w > highest) continue;
    const auto it = std::lower_bound(pointers.begin(), pointers.end(), w);
    if (*it != w) continue;
    seen[it - pointers.begin()] |= off < offset || off >= offset + size ? kElsewhere : off == offset ? kOutput : kInput;
  }
  for (size_t i = 0; i < pointers.size(); ++i) {
    if (seen[i] & kOutput) roles[i] = trace::AccessMode::Write;  // the output is written, whatever else reads it
    else if ((seen[i] & kInput) && !(seen[i] & kElsewhere)) roles[i] = trace::AccessMode::Read;
  }
}

}  // namespace streamhaz::tracer
