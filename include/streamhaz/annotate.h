/* streamhaz/annotate.h: optional hints a traced program may give the streamhaz tracer.
 *
 * Header-only C. Each call looks the tracer up in the process (it exports the symbols
 * below when loaded through `streamhaz run`); without the tracer every call is a no-op,
 * so a program can keep these calls in production builds.
 *
 *   streamhaz_name_buffer(ptr, bytes, "ipg_buffer[0]");   // names a byte range in reports
 *   streamhaz_name_stream(stream, "reduction stream");   // names a cudaStream_t
 */
#ifndef STREAMHAZ_ANNOTATE_H
#define STREAMHAZ_ANNOTATE_H

#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*streamhaz_name_buffer_fn)(const void* ptr, size_t bytes, const char* name);
typedef void (*streamhaz_name_stream_fn)(void* stream, const char* name);

/* The tracer may be loaded after the first lookup (CUDA injection happens at the first
 * CUDA call), so only a successful lookup is cached. */
static inline void* streamhaz_annotate_lookup_(const char* symbol, void** cache) {
  if (!*cache) *cache = dlsym(RTLD_DEFAULT, symbol);
  return *cache;
}

static inline void streamhaz_name_buffer(const void* ptr, size_t bytes, const char* name) {
  static void* fn;
  void* f = streamhaz_annotate_lookup_("streamhaz_tracer_name_buffer", &fn);
  if (f) ((streamhaz_name_buffer_fn)f)(ptr, bytes, name);
}

/* `stream` is a cudaStream_t (or CUstream); void* keeps this header free of CUDA headers. */
static inline void streamhaz_name_stream(void* stream, const char* name) {
  static void* fn;
  void* f = streamhaz_annotate_lookup_("streamhaz_tracer_name_stream", &fn);
  if (f) ((streamhaz_name_stream_fn)f)(stream, name);
}

#ifdef __cplusplus
}
#endif

#endif /* STREAMHAZ_ANNOTATE_H */
