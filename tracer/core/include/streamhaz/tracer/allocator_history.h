// PyTorch's caching-allocator history as the tracer's Python side hands it over when the
// process exits (tracer/python/sitecustomize.py, `streamhaz run --allocator-history on`):
// every block the allocator gave a tensor, with the Python stack that asked for it. The text
// form keeps the Python side free of any binary layout:
//
//   streamhaz-allocator-history 1
//   alloc DEVICE ADDRESS BYTES STREAM UNIX_US        (decimal; STREAM is the CUstream value)
//   frame<TAB>LINE<TAB>FUNCTION<TAB>FILE             (its frames, innermost first)
//
// docs/tracer.md says how the allocations become TensorAlloc records.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "streamhaz/tracer/stack_table.h"

namespace streamhaz::tracer {

struct HistoryAllocation {
  uint32_t device = 0;
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint64_t unix_us = 0;
  std::vector<PythonFrameInfo> frames;  // innermost first
};

inline constexpr std::string_view kAllocatorHistoryMagic = "streamhaz-allocator-history 1";

// The allocations of `text`, in the order given; a malformed text gives why (with its line
// number) and nothing else: a half-read history would name wrong tensors.
std::variant<std::vector<HistoryAllocation>, std::string> parse_allocator_history(std::string_view text);

}  // namespace streamhaz::tracer
