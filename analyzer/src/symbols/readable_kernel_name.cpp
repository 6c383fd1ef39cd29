#include "streamhaz/analysis/kernel_name.h"

#include <optional>

#include "streamhaz/analysis/demangle.h"

namespace streamhaz::analysis {
namespace {

constexpr size_t kMaxChars = 160;

// "f<int>(float*, int)" -> "f<int>": the parenthesised list that ends the name, if any.
std::string_view without_parameters(std::string_view s) {
  if (s.empty() || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) return s.substr(0, i);
  }
  return s;
}

// Template arguments below the first level become "<...>".
std::string fold_nested_templates(std::string_view s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '<') {
      if (++depth == 2) out += "<...>";
      if (depth >= 2) continue;
    } else if (c == '>') {
      if (depth-- >= 2) continue;
    } else if (depth >= 2) {
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string readable_kernel_name(std::string_view mangled) {
  if (!mangled.starts_with("_Z")) return std::string(mangled);
  const std::optional<std::string> full = demangle(mangled);
  if (!full) return std::string(mangled);
  std::string_view s = *full;
  if (s.starts_with("void ")) s.remove_prefix(5);  // kernels return void
  std::string name = fold_nested_templates(without_parameters(s));
  if (name.size() > kMaxChars) name = name.substr(0, kMaxChars - 3) + "...";
  return name;
}

}  // namespace streamhaz::analysis
