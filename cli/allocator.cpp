#include "allocator.h"

#include <cstdlib>
#include <new>

#ifdef STREAMHAZ_WITH_MIMALLOC
#include <mimalloc.h>

// mimalloc's own throwing `operator new` is C and aborts when memory runs out; the command turns
// std::bad_alloc into an error that names the trace and record (cli/messages.h). These replace
// it (the executable's definitions come first in the lookup); the nothrow forms and the deletes
// stay mimalloc's.
void* operator new(std::size_t size) {
  if (void* block = mi_new_nothrow(size)) return block;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* block = mi_new_nothrow(size)) return block;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  if (void* block = mi_new_aligned_nothrow(size, static_cast<size_t>(alignment))) return block;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  if (void* block = mi_new_aligned_nothrow(size, static_cast<size_t>(alignment))) return block;
  throw std::bad_alloc();
}
#endif

namespace streamhaz::cli {

void tune_allocator() {
#if defined(STREAMHAZ_WITH_MIMALLOC) && MI_MALLOC_VERSION >= 200 && MI_MALLOC_VERSION < 210
  // A check's memory peaks late (the pass holds every rank's judged steps); handing freed pages
  // back to the system in between only faults them in again: a check of 1,024 ranks took 421,000
  // page faults instead of 508,000 with these. Defaults: MIMALLOC_* variables still win.
  mi_option_set_default(mi_option_allow_decommit, 0);
  mi_option_set_default(mi_option_eager_commit_delay, 0);
#endif
}

std::string allocator_in_use() {
#ifdef STREAMHAZ_WITH_MIMALLOC
  void* block = std::calloc(1, 64);  // calloc: the block is read as initialised
  const bool replaced = block != nullptr && mi_is_in_heap_region(block);
  std::free(block);
  if (replaced) return "mimalloc";
#endif
  return "system";
}

}  // namespace streamhaz::cli
