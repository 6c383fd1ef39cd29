// The declarations a CUDA source needs from the toolkit's headers, given to clang as an
// unsaved file so that kernels parse where no CUDA toolkit is installed.
#pragma once

#include <string_view>

namespace streamhaz::kernels {

// The path the prelude is given under (force-included with -include): a path no real file
// has; clang reads it from the unsaved-file list.
inline constexpr std::string_view kPreludePath = "/streamhaz-prelude/streamhaz_cuda_prelude.h";
std::string_view cuda_prelude();

// The intrinsics the prelude declares that access memory through their first argument.
enum class IntrinsicAccess { None, Read, ReadWrite };
IntrinsicAccess intrinsic_access(std::string_view function_name);

}  // namespace streamhaz::kernels
