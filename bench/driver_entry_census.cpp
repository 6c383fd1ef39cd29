// driver_entry_census: which of the driver calls the tracer spends most of its time on reach the
// driver through entry points the program looked up, so that a wrapper handed out at the lookup
// (instead of CUPTI's callback on every call) would see them. The CUDA runtime looks the driver
// up with cuGetProcAddress since CUDA 11.3, and finds cuGetProcAddress itself with dlsym; Triton
// and others dlsym the driver's functions. LD_PRELOAD this library: its dlsym and its
// cuGetProcAddress return, for each function below, a wrapper that counts and forwards, and at
// exit it writes one line per function and entry point to $STREAMHAZ_CENSUS_OUT.<pid> (stderr if
// unset), with the lookups it saw. Compare with the tracer's own counts of the same run
// (`streamhaz run --self-profile on`, then `streamhaz inspect`): a call the tracer counted and
// the census did not came through another way (a direct link to libcuda, say).
//
// A wrapper is handed out only for an address that is the driver's exported symbol of the named
// version (or its per-thread-stream twin), whose signature this file declares; any other
// version passes through unwrapped and uncounted.
#include <cuda.h>
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <utility>

namespace {

struct Slot {
  const char* symbol = nullptr;    // the driver's exported name of this entry point
  std::atomic<void*> real{nullptr};
  std::atomic<uint64_t> calls{0};
};

constexpr size_t kMaxSlots = 64;
Slot slots[kMaxSlots];

template <typename Fn>
struct Forward;
template <typename... A>
struct Forward<CUresult (*)(A...)> {
  template <size_t I>
  static CUresult CUDAAPI call(A... a) {
    slots[I].calls.fetch_add(1, std::memory_order_relaxed);
    return reinterpret_cast<CUresult(CUDAAPI*)(A...)>(slots[I].real.load(std::memory_order_relaxed))(a...);
  }
};

// One hooked function: its base name (as cuGetProcAddress is asked), its exported names with the
// declared signature, and a wrapper for each.
struct Hooked {
  const char* base;
  const char* exported[2];  // the default-stream and per-thread-stream symbols (or null)
  void* wrapper[2];
  size_t slot[2];
};

template <typename Fn, size_t I0, size_t I1>
Hooked hooked(const char* base, const char* plain, const char* per_thread) {
  return Hooked{base,
                {plain, per_thread},
                {reinterpret_cast<void*>(&Forward<Fn>::template call<I0>),
                 reinterpret_cast<void*>(&Forward<Fn>::template call<I1>)},
                {I0, I1}};
}

// The launches, copies, sets and event calls that take most of the tracer's time per step.
Hooked table[] = {
    hooked<decltype(&cuLaunchKernel), 0, 1>("cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel_ptsz"),
    hooked<decltype(&cuLaunchKernelEx), 2, 3>("cuLaunchKernelEx", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz"),
    hooked<decltype(&cuMemcpyAsync), 4, 5>("cuMemcpyAsync", "cuMemcpyAsync", "cuMemcpyAsync_ptsz"),
    hooked<decltype(&cuMemcpyHtoDAsync), 6, 7>("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2",
                                               "cuMemcpyHtoDAsync_v2_ptsz"),
    hooked<decltype(&cuMemcpyDtoHAsync), 8, 9>("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2",
                                               "cuMemcpyDtoHAsync_v2_ptsz"),
    hooked<decltype(&cuMemcpyDtoDAsync), 10, 11>("cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2",
                                                 "cuMemcpyDtoDAsync_v2_ptsz"),
    hooked<decltype(&cuMemsetD8Async), 12, 13>("cuMemsetD8Async", "cuMemsetD8Async", "cuMemsetD8Async_ptsz"),
    hooked<decltype(&cuMemsetD32Async), 14, 15>("cuMemsetD32Async", "cuMemsetD32Async", "cuMemsetD32Async_ptsz"),
    hooked<decltype(&cuEventRecord), 16, 17>("cuEventRecord", "cuEventRecord", "cuEventRecord_ptsz"),
    hooked<decltype(&cuEventRecordWithFlags), 18, 19>("cuEventRecordWithFlags", "cuEventRecordWithFlags",
                                                      "cuEventRecordWithFlags_ptsz"),
    hooked<decltype(&cuStreamWaitEvent), 20, 21>("cuStreamWaitEvent", "cuStreamWaitEvent", "cuStreamWaitEvent_ptsz"),
    hooked<decltype(&cuEventQuery), 22, 23>("cuEventQuery", "cuEventQuery", nullptr),
    hooked<decltype(&cuStreamSynchronize), 24, 25>("cuStreamSynchronize", "cuStreamSynchronize",
                                                   "cuStreamSynchronize_ptsz"),
};

std::atomic<uint64_t> proc_lookups{0}, proc_wrapped{0}, dlsym_wrapped{0};

using DlsymFn = void* (*)(void*, const char*);
DlsymFn real_dlsym() {
  static DlsymFn fn = [] {
    for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5"})
      if (void* f = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFn>(f);
    return static_cast<DlsymFn>(nullptr);
  }();
  return fn;
}

// The driver's own address of a symbol (null until the program has loaded the driver).
void* driver_symbol(const char* name) {
  static std::atomic<void*> driver{nullptr};
  void* d = driver.load();
  if (!d) driver.store(d = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD));
  return d && name ? real_dlsym()(d, name) : nullptr;
}

// dlsym(RTLD_NEXT, ...) means "after the caller's object", and the caller glibc sees is this
// file: look after the real caller's object instead, in load order.
void* next_after(const void* caller, const char* symbol) {
  Dl_info info{};
  if (!dladdr(caller, &info)) return nullptr;
  struct Walk {
    const void* caller_base;
    const char* symbol;
    bool past = false;
    void* found = nullptr;
  } walk{info.dli_fbase, symbol};
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* data) {
        auto& w = *static_cast<Walk*>(data);
        if (!w.past) {
          w.past = reinterpret_cast<const void*>(object->dlpi_addr) == w.caller_base ||
                   (object->dlpi_phnum && reinterpret_cast<const char*>(object->dlpi_addr) +
                                                  object->dlpi_phdr[0].p_vaddr == w.caller_base);
          return 0;
        }
        void* handle = dlopen(object->dlpi_name && *object->dlpi_name ? object->dlpi_name : nullptr,
                              RTLD_LAZY | RTLD_NOLOAD);
        if (!handle) return 0;
        w.found = real_dlsym()(handle, w.symbol);
        dlclose(handle);
        return w.found ? 1 : 0;
      },
      &walk);
  return walk.found;
}

// The wrapper for `fn` if it is a hooked symbol's exported address; else `fn`.
void* wrap(void* fn) {
  if (!fn) return fn;
  for (Hooked& h : table)
    for (int v = 0; v < 2; ++v)
      if (h.exported[v] && driver_symbol(h.exported[v]) == fn) {
        Slot& s = slots[h.slot[v]];
        s.symbol = h.exported[v];
        s.real.store(fn, std::memory_order_relaxed);
        return h.wrapper[v];
      }
  return fn;
}

using GetProcV2 = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetProcV1 = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t);
std::atomic<void*> real_get_proc_v2{nullptr}, real_get_proc_v1{nullptr};

CUresult CUDAAPI get_proc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status);
CUresult CUDAAPI get_proc_v1(const char* symbol, void** pfn, int version, cuuint64_t flags);

// cuGetProcAddress asked for itself hands out this file's lookup too.
void after_lookup(const char* symbol, void** pfn) {
  proc_lookups.fetch_add(1, std::memory_order_relaxed);
  if (!pfn || !*pfn) return;
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    if (*pfn == driver_symbol("cuGetProcAddress_v2")) {
      real_get_proc_v2.store(*pfn);
      *pfn = reinterpret_cast<void*>(&get_proc_v2);
    } else if (*pfn == driver_symbol("cuGetProcAddress")) {
      real_get_proc_v1.store(*pfn);
      *pfn = reinterpret_cast<void*>(&get_proc_v1);
    }
    return;
  }
  void* wrapped = wrap(*pfn);
  if (wrapped != *pfn) proc_wrapped.fetch_add(1, std::memory_order_relaxed);
  *pfn = wrapped;
}

CUresult CUDAAPI get_proc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  const CUresult r = reinterpret_cast<GetProcV2>(real_get_proc_v2.load())(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && symbol) after_lookup(symbol, pfn);
  return r;
}

CUresult CUDAAPI get_proc_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const CUresult r = reinterpret_cast<GetProcV1>(real_get_proc_v1.load())(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && symbol) after_lookup(symbol, pfn);
  return r;
}

__attribute__((destructor)) void report() {
  std::string path;
  if (const char* out = std::getenv("STREAMHAZ_CENSUS_OUT")) path = std::string(out) + "." + std::to_string(getpid());
  FILE* f = path.empty() ? stderr : std::fopen(path.c_str(), "w");
  if (!f) return;
  std::fprintf(f, "census: cuGetProcAddress lookups %llu (hooked ones wrapped %llu), dlsym hits wrapped %llu\n",
               static_cast<unsigned long long>(proc_lookups.load()),
               static_cast<unsigned long long>(proc_wrapped.load()),
               static_cast<unsigned long long>(dlsym_wrapped.load()));
  for (const Slot& s : slots)
    if (s.symbol)
      std::fprintf(f, "census: %s %llu\n", s.symbol, static_cast<unsigned long long>(s.calls.load()));
  if (f != stderr) std::fclose(f);
}

}  // namespace

extern "C" void* dlsym(void* handle, const char* symbol) {
  DlsymFn real = real_dlsym();
  if (!real) return nullptr;
  void* fn = handle == RTLD_NEXT ? next_after(__builtin_return_address(0), symbol) : real(handle, symbol);
  if (!fn || std::strncmp(symbol, "cu", 2) != 0) return fn;
  if (std::strcmp(symbol, "cuGetProcAddress_v2") == 0) {
    real_get_proc_v2.store(fn);
    return reinterpret_cast<void*>(&get_proc_v2);
  }
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    real_get_proc_v1.store(fn);
    return reinterpret_cast<void*>(&get_proc_v1);
  }
  void* wrapped = wrap(fn);
  if (wrapped != fn) dlsym_wrapped.fetch_add(1, std::memory_order_relaxed);
  return wrapped;
}
