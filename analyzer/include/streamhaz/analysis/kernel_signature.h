// Kernel names as the demangler prints them: the traced (mangled) name of a launch and the
// summaries of kernels.json are compared on the qualified name and the parameter type list.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace streamhaz::analysis {

// A demangled function name taken apart: "void ns::(anonymous namespace)::k<4>(float*, long)"
// gives qualified "ns::k" (anonymous namespaces dropped), params "float*, long", templated.
struct FunctionName {
  std::string qualified;
  std::string params;  // normalised, see normalise_types
  bool templated = false;
};
std::optional<FunctionName> split_function_name(std::string_view demangled);

// The parameter list of a demangled function name as the demangler printed it
// ("float*, long" of "ns::k(float*, long)").
std::optional<std::string> parameter_list(std::string_view demangled);

// Parameter type lists compared textually: spaces only where two identifiers meet
// ("float const *" and "float const*" are equal), anonymous-namespace qualifiers dropped.
std::string normalise_types(std::string_view types);

// The number of parameters in a normalised list ("" and "void" have none).
size_t count_params(std::string_view params);

// nvcc names a translation unit's anonymous namespace _GLOBAL__N__<hash>_<len><stem>_<hash>,
// with stem the source file name with '.' turned into '_' ("kernels_cu"); empty if none.
std::string anonymous_namespace_stem(std::string_view mangled);

}  // namespace streamhaz::analysis
