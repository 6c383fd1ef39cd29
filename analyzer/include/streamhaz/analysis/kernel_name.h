#pragma once
// Kernel names for people. CUDA kernels arrive mangled (`_ZN2at6native29vectorized_...`); the
// reports keep that name wherever it identifies (keys, suppressions, JSON `name`) and show
// this reading of it in text: demangled, without the return type and parameter list, template
// arguments nested two deep folded to <...>, at most 160 characters.
#include <string>
#include <string_view>

namespace streamhaz::analysis {

std::string readable_kernel_name(std::string_view mangled);

}  // namespace streamhaz::analysis
