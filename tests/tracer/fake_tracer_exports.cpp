// Stands in for libstreamhaz-tracer.so in the test of the tracer's Python side
// (python_side_test.py): the three functions that side looks up, writing what they are handed
// to $FAKE_TRACER_OUT; $FAKE_TRACER_WANTED=1 makes the process want the allocator history.
#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace {
void append(const char* what, const char* text, size_t bytes) {
  const char* path = std::getenv("FAKE_TRACER_OUT");
  if (!path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", what);
    std::fwrite(text, 1, bytes, f);
    std::fprintf(f, "\n--\n");
    std::fclose(f);
  }
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int streamhaz_tracer_allocator_history_wanted() {
  const char* w = std::getenv("FAKE_TRACER_WANTED");
  return w && w[0] == '1';
}

extern "C" __attribute__((visibility("default"))) long streamhaz_tracer_allocator_history(const char* text,
                                                                                         size_t bytes) {
  append("history", text, bytes);
  return 1;
}

extern "C" __attribute__((visibility("default"))) void streamhaz_tracer_allocator_history_unavailable(
    const char* why) {
  size_t n = 0;
  while (why[n]) ++n;
  append("unavailable", why, n);
}
