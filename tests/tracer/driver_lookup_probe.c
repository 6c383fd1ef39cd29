// The tracer's dlsym hook (tracer/glue/driver_wrappers.cpp) against glibc's own semantics, with
// the CUDA toolkit's stub libcuda (no GPU): built three times, as a dependency, a plugin that
// needs it, and the program that loads the plugin RTLD_LOCAL. `driver_lookup_probe tracer`
// expects the preloaded tracer's wrappers (STREAMHAZ_DRIVER_WRAPPERS=on); `tracer-off` the
// preloaded tracer with them off, which hands out the driver's functions; `plain` no tracer.
// Prints each check; exits 1 when one fails.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(PROBE_DEPENDENCY)
int probe_only_in_dependency(void) { return 42; }
int probe_defined_twice(void) { return 2; }

#elif defined(PROBE_PLUGIN)
int probe_only_in_dependency(void);
// glibc looks RTLD_DEFAULT up in the caller's scope, which for an object opened RTLD_LOCAL holds
// its own dependencies.
int probe_plugin_finds_dependency(void) {
  return dlsym(RTLD_DEFAULT, "probe_only_in_dependency") == (void*)&probe_only_in_dependency;
}
// RTLD_NEXT searches the caller's scope after the caller: here, the dependency's definition.
int probe_defined_twice(void) { return 1; }
int probe_plugin_finds_next(void) {
  int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "probe_defined_twice");
  return next && next() == 2;
}

#else
static int failed = 0;
static void expect(int ok, const char* what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) failed = 1;
}

// An interposer in the program: RTLD_NEXT must find the next malloc, never this one.
static void* (*next_malloc)(size_t);
static int mallocs = 0;
void* malloc(size_t n) {
  if (!next_malloc) next_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");
  ++mallocs;
  return next_malloc(n);
}

static const char* object_of(void* address) {
  Dl_info info;
  if (!address || !dladdr(address, &info) || !info.dli_fname) return "(none)";
  const char* slash = strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

typedef int (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                         void**);

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "plain";
  const int tracer = strcmp(mode, "tracer") == 0, preloaded = strncmp(mode, "tracer", 6) == 0;
  void* volatile block = malloc(16);  // volatile: kept, not folded away with its free
  free(block);
  expect(next_malloc && next_malloc != (void*)&malloc && mallocs >= 1,
         "dlsym(RTLD_NEXT) from the program finds the next malloc, not its own");
  void* plugin = dlopen(argc > 2 ? argv[2] : "./libprobe_plugin.so", RTLD_NOW | RTLD_LOCAL);
  int (*finds)(void) = plugin ? (int (*)(void))dlsym(plugin, "probe_plugin_finds_dependency") : NULL;
  expect(finds && finds(), "dlsym(RTLD_DEFAULT) from a plugin opened RTLD_LOCAL finds its own dependency");
  int (*next)(void) = plugin ? (int (*)(void))dlsym(plugin, "probe_plugin_finds_next") : NULL;
  expect(next && next(), "dlsym(RTLD_NEXT) from that plugin finds its dependency's definition after its own");
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
  expect(cuda != NULL, "the driver (the toolkit's stub) opens");
  if (!cuda) return 1;
  const char* want = tracer ? "libstreamhaz-tracer.so" : "libcuda.so.1";
  void* launch = dlsym(cuda, "cuLaunchKernel");
  printf("  cuLaunchKernel from the driver's handle lies in %s\n", object_of(launch));
  expect(strcmp(object_of(launch), want) == 0, "a hot call looked up in the driver is the tracer's wrapper when on");
  expect(strcmp(object_of(dlsym(cuda, "cuGetProcAddress_v2")), want) == 0,
         "cuGetProcAddress looked up in the driver is the tracer's when on");
  expect(strcmp(object_of(dlsym(cuda, "cuInit")), "libcuda.so.1") == 0, "any other call is the driver's own");
  // Found by name in the global scope (as a PLT binds it): the preloaded tracer comes first (the
  // driver, opened RTLD_LOCAL, is not in it), on or off (off, it only forwards).
  if (preloaded)
    expect(strcmp(object_of(dlsym(RTLD_DEFAULT, "cuEventQuery")), "libstreamhaz-tracer.so") == 0,
           "a hot call found through RTLD_DEFAULT (or a PLT) is the preloaded tracer's");
  // The wrapper forwards: the stub's answer to every call (CUDA_ERROR_STUB_LIBRARY) comes back.
  int through = ((launch_fn)launch)(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  printf("  cuLaunchKernel through what dlsym handed out returned %d\n", through);
  expect(through == 34, "the call reaches the driver and its result comes back");
  return failed;
}
#endif
