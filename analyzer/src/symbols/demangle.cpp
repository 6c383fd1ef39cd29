#include "streamhaz/analysis/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace streamhaz::analysis {

std::optional<std::string> demangle(std::string_view mangled) {
  if (!mangled.starts_with("_Z")) return std::nullopt;
  return demangle_symbol(mangled);
}

std::optional<std::string> demangle_symbol(std::string_view symbol) {
  int status = 0;
  const std::string name(symbol);  // the demangler reads a NUL-terminated string
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                  &std::free);
  if (status != 0 || !out) return std::nullopt;
  return std::string(out.get());
}

}  // namespace streamhaz::analysis
