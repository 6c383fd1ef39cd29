// A thread's own T, on the heap, for per-thread state too large for the tracer's thread-local
// block. The tracer is built with initial-exec TLS (tracer/CMakeLists.txt): each thread_local is
// then one load at a fixed offset from the thread pointer, where the default model for a shared
// library calls __tls_get_addr (about twenty such calls a kernel launch, each with its own cold
// GOT entry). A library opened by dlopen (CUDA_INJECTION64_PATH alone) gets an initial-exec
// block only out of the little static TLS glibc keeps spare (some 500 bytes once Python is up),
// so the block holds scalars and pointers, and anything larger lives here: one pointer in the
// block, the T made on the thread's first use and freed when the thread exits.
#pragma once

namespace streamhaz::tracer {

template <class T> class PerThread {
 public:
  static T& get() {
    if (T* mine = mine_) [[likely]] return *mine;
    return make();
  }

 private:
  // Registered for the thread's exit by its first use. A call the thread makes after it ran (from
  // another thread_local's destructor) gets a new T, which is then never freed: rare and small.
  struct Owner {
    bool made = false;
    ~Owner() {
      T* mine = mine_;
      mine_ = nullptr;
      delete mine;
    }
  };
  [[gnu::noinline, gnu::cold]] static T& make() {
    owner_.made = true;
    mine_ = new T();
    return *mine_;
  }
  static inline thread_local T* mine_ = nullptr;  // constant-initialised: read with no guard
  static inline thread_local Owner owner_;
};

}  // namespace streamhaz::tracer
