// libFuzzer target: any bytes handed to TraceReader end in records or a TraceError, never in
// a crash, a hang or a sanitizer report. Built with clang (-fsanitize=fuzzer,address,undefined).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "streamhaz/trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path; a memory file keeps the fuzzer off the disk.
  static int fd = memfd_create("streamhaz-fuzz", 0);
  if (fd < 0) return 0;
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    streamhaz::trace::TraceReader reader(path);
    streamhaz::trace::Record record;
    while (reader.next(record)) {
    }
  } catch (const streamhaz::trace::TraceError&) {
  }
  return 0;
}
