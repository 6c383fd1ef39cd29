// A kernel's parameters as the launch's parameter buffer holds them: offsets and sizes from
// clang's type sizes and alignments, in order, each at its natural alignment (the CUDA ABI).
#pragma once

#include <clang-c/Index.h>

#include <nlohmann/json.hpp>

namespace streamhaz::kernels {

// The "params" entries without access facts: name, type, offset, size, pointer,
// pointee_bytes, integer, signed. Offsets of a parameter whose size depends on a template
// argument, and of every one after it, are null.
nlohmann::ordered_json param_layout(CXCursor kernel);

// True when a by-value parameter of record type holds pointers (reached by the kernel
// through members, which the summary does not describe).
bool holds_pointers(CXType t, int depth = 0);

}  // namespace streamhaz::kernels
