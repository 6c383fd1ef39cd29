// A small shared library built with -g -O0 for the symbolisation test: it hands out a return
// address inside itself, as the tracer's native unwinding would record one.
#include "symbol_probe.h"

__attribute__((noinline)) static void* caller_return_address() { return __builtin_return_address(0); }

void* symbol_probe_call_site(int* line) {
  *line = __LINE__ + 1;
  void* ra = caller_return_address();
  return ra;
}
