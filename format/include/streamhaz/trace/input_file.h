// Opening the files a verb reads, traces and the side files beside them (what-if specs,
// suppression files, kernels.json), one way: regular files only. A FIFO would block the open
// or the read for ever, a character device such as /dev/zero never ends, and a folder reads as
// empty; each is refused with a TraceError naming the file.
#pragma once

#include <cstdint>
#include <string>

namespace streamhaz::trace {

// A regular file open for reading (its descriptor, owned by the caller) and its size.
struct RegularFile {
  int fd = -1;
  uint64_t bytes = 0;
};
// Throws TraceError (at byte 0) when `path` cannot be opened or is not a regular file.
RegularFile open_regular_file(const std::string& path);

// The whole of a side file of at most `max_bytes` (larger is refused, so a huge or growing
// file cannot take the memory). Throws TraceError naming the file on any failure.
std::string read_side_file(const std::string& path, uint64_t max_bytes);

}  // namespace streamhaz::trace
