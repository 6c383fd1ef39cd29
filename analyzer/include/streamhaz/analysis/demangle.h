// The analyzer's one call of the C++ ABI demangler (abi::__cxa_demangle), for kernel names,
// report text and native frames alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace streamhaz::analysis {

// A mangled name ("_Z..."), demangled; nullopt for anything else (extern "C" kernels) or a
// name the demangler rejects.
std::optional<std::string> demangle(std::string_view mangled);

// Any symbol the demangler reads, also a bare type mangling ("i" reads "int"): native symbols
// from the debug information, taken as they come.
std::optional<std::string> demangle_symbol(std::string_view symbol);

}  // namespace streamhaz::analysis
