// A thread's own T, on the heap, for per-thread state too large for the tracer's thread-local
// block. The tracer is built with initial-exec TLS (tracer/core/CMakeLists.txt): a thread_local is
// then a GOT load and a load off the thread pointer, where the default model for a shared library
// calls __tls_get_addr (about twenty such calls a kernel launch, each with its own GOT entry). A
// library opened by dlopen (CUDA_INJECTION64_PATH alone) gets an initial-exec block only out of
// the static TLS glibc keeps spare (about 1.7 KiB in a bare process, shared with every other such
// library), and when it does not fit the dlopen fails and the run goes untraced without a word. So
// the block holds scalars and pointers, and anything larger lives here: one pointer in the block,
// the T made on the thread's first use.
//
// Freed by a pthread key's destructor, not a thread_local's: glibc runs every thread_local
// destructor first, and the program's may still call CUDA (and so the tracer); a T made again by
// another key's destructor is freed in the next round of key destructors. The tracer is never
// unloaded (-z nodelete), so the destructor's code outlives every thread.
//
// One T per (T, Tag): a T (or Tag) must be private to its user, or two users share one object.
#pragma once

#include <pthread.h>

namespace streamhaz::tracer {

template <class T, class Tag = T> class PerThread {
 public:
  static T& get() {
    if (T* mine = mine_) [[likely]] return *mine;
    return make();
  }
  // The thread's T if it has one (never makes one): for calls that only read or reset it.
  static T* find() { return mine_; }

 private:
  static void destroy(void* mine) {
    mine_ = nullptr;
    delete static_cast<T*>(mine);
  }
  [[gnu::noinline, gnu::cold]] static T& make() {
    static const pthread_key_t* key = [] {
      static pthread_key_t k;
      return pthread_key_create(&k, &destroy) == 0 ? &k : nullptr;  // none left: never freed
    }();
    T* mine = new T();
    if (key) pthread_setspecific(*key, mine);
    mine_ = mine;
    return *mine;
  }
  static constinit inline thread_local T* mine_ = nullptr;
};

}  // namespace streamhaz::tracer
