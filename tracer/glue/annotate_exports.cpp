// The functions include/streamhaz/annotate.h finds with dlsym(RTLD_DEFAULT).
#include <cstddef>
#include <cstdint>

#include "cuda_facts.h"
#include "tracer_state.h"

using namespace streamhaz::tracer;
using namespace streamhaz::tracer::glue;

extern "C" __attribute__((visibility("default"))) void streamhaz_tracer_name_buffer(const void* ptr, size_t bytes,
                                                                                      const char* name) {
  if (Recorder* rec = early_recorder(); rec && name) rec->buffer_named(reinterpret_cast<uint64_t>(ptr), bytes, name);
}

extern "C" __attribute__((visibility("default"))) void streamhaz_tracer_name_stream(void* stream, const char* name) {
  if (Recorder* rec = early_recorder(); rec && name)
    rec->stream_named(StreamRef{reinterpret_cast<uint64_t>(stream), current_device(), false}, name);
}
