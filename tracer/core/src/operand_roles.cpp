#include "streamhaz/tracer/operand_roles.h"

#include <algorithm>
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

void operand_roles(std::string_view params, const std::vector<std::pair<size_t, size_t>>* layout, int array_param,
                   const std::vector<uint64_t>& pointers, std::vector<trace::AccessMode>& roles) {
  roles.assign(pointers.size(), trace::AccessMode::ReadWrite);
  if (array_param < 0 || !layout || static_cast<size_t>(array_param) >= layout->size()) return;
  const auto [offset, size] = (*layout)[array_param];
  if (size == 0 || size % 8 != 0 || size / 8 > kMaxOperands || offset % 8 != 0 || offset + size > params.size()) return;
  for (size_t i = 0; i < pointers.size(); ++i) {
    const uint64_t p = pointers[i];
    bool output = false, input = false, elsewhere = false;
    for (size_t off = 0; off + 8 <= params.size(); off += 8) {
      if (word_at(params, off) != p) continue;
      if (off < offset || off >= offset + size) elsewhere = true;
      else if (off == offset) output = true;
      else input = true;
    }
    if (output) roles[i] = trace::AccessMode::Write;  // the output is written, whatever else reads it
    else if (input && !elsewhere) roles[i] = trace::AccessMode::Read;
  }
}

}  // namespace streamhaz::tracer
