// Which pointer arguments a kernel writes, where a library's calling convention says so. The
// pointer footprint tier knows only that an argument points into an allocation; for the kernel
// families below it also knows the direction, which lets `check` call a conflict with such a
// write a race rather than a possible one (docs/footprints.md, "Directed pointers").
//
// One table, one row per family: the mangled-name prefix and the index of the parameter that
// holds the operand array. PyTorch's TensorIterator kernels take their operands as one array of
// char pointers, outputs first (`iter.data_ptr(0)` is the output; single-output families only):
//   at::native::vectorized_elementwise_kernel<vec, func_t, array_t>(int N, func_t f, array_t data)
//   at::native::unrolled_elementwise_kernel<func_t, array_t, ...>(int N, func_t f, array_t data, ...)
// To add a family, add a row; a family with several outputs needs its own output count first.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "streamhaz/trace/records.h"
#include "streamhaz/tracer/hot_path.h"

namespace streamhaz::tracer {

// The parameter holding a kernel's operand array, by its mangled name; -1: no known convention.
int operand_array_param(std::string_view mangled_name);

// Argument bytes that are not the launch's, where a library's convention says so: PyTorch's cat
// (the CatArrayBatchedCopy family, any variant) takes CatArrInputTensorMetadata by value, an
// array of up to a batch's input pointers first, and fills only the slots of this launch's
// inputs, one per grid row (blockIdx.y picks the input): the other slots hold whatever the host
// stack held, often pointers to other live tensors, which the pointer tier would take for
// operands (a false race on FSDP2's reduce-scatter buffer, seen on an H200).
// The parameter holding such an array of input pointers, by mangled name; -1: none known.
int unfilled_slots_param(std::string_view mangled_name);
// The bytes of `params` past the launch's filled slots, [begin, end), given that parameter
// (unfilled_slots_param) and the grid's rows; {0, 0} when there are none or the layout does not
// show the parameter.
std::pair<size_t, size_t> unfilled_slot_bytes(const std::vector<std::pair<size_t, size_t>>* layout, int slots_param,
                                              uint32_t grid_rows, size_t params_size);

// The role of each pointer in `pointers` (found in `params` by AllocationIndex::pointers_in, so
// distinct and in address order):
// Write for the output, Read for an input, ReadWrite (unknown) otherwise: a pointer outside the
// operand array, or any pointer when the layout does not show the array. A pointer that is
// output and input (in place) is Write.
STREAMHAZ_HOT void operand_roles(std::string_view params, const std::vector<std::pair<size_t, size_t>>* layout,
                                 int array_param, std::span<const uint64_t> pointers,
                                 std::vector<trace::AccessMode>& roles);

}  // namespace streamhaz::tracer
