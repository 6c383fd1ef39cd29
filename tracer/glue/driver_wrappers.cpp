#include "driver_wrappers.h"

#include <cuda.h>
#include <dlfcn.h>
#include <link.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "callbacks.h"
#include "driver_decode.h"
#include "tracer_state.h"
#include "wrapper_audit.h"
#include "streamhaz/tracer/hot_path.h"

// The hand-over, and why no call is lost or recorded twice:
// - A wrapper that finds `taking` set records its call itself, and marks its thread while it
//   does, so that CUPTI's callback for the same call (still on for a moment) returns at once.
// - A wrapper that finds it clear counts itself into `forwarding`, reads `taking` again and, if
//   still clear, forwards to the driver, where CUPTI's callback records the call. Both are
//   sequentially consistent, like the hand-over's store of `taking` and its reads of
//   `forwarding`: either the wrapper sees `taking` set, or the hand-over sees it counted and
//   waits for it before it switches CUPTI's callbacks off.
// - Handing back switches CUPTI's callbacks on before it clears `taking`.
// - An audit switches CUPTI's callbacks on with `taking` left set: a call inside a wrapper (the
//   thread marked, forwarding or recording) is the wrapper's; one outside any went around the
//   wrappers, and CUPTI's callback records it. Ending an audit after such a call is a hand-back
//   for good (`retired`).

namespace streamhaz::tracer::glue {
namespace {

// --- the hot calls -------------------------------------------------------------------------

#define STREAMHAZ_UNPAREN(...) __VA_ARGS__
// Each hot call: its driver symbol, CUPTI's parameter struct for it (the call's parameters in
// order), its parameters and the names that forward them. `_PT`: with its per-thread-stream twin
// (_ptsz), which takes the same parameters.
#define STREAMHAZ_HOT_PT(X, symbol, P, params, args) X(symbol, P, params, args) X(symbol##_ptsz, P, params, args)
#define STREAMHAZ_HOT_CALLS(X)                                                                                    \
  STREAMHAZ_HOT_PT(X, cuLaunchKernel, cuLaunchKernel_params,                                                     \
                   (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                    unsigned smem, CUstream s, void** kernel_params, void** extra),                              \
                   (f, gx, gy, gz, bx, by, bz, smem, s, kernel_params, extra))                                   \
  STREAMHAZ_HOT_PT(X, cuLaunchKernelEx, cuLaunchKernelEx_params,                                                 \
                   (const CUlaunchConfig* config, CUfunction f, void** kernel_params, void** extra),             \
                   (config, f, kernel_params, extra))                                                            \
  STREAMHAZ_HOT_PT(X, cuMemcpyAsync, cuMemcpyAsync_params,                                                       \
                   (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s), (dst, src, bytes, s))           \
  STREAMHAZ_HOT_PT(X, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_params,                                         \
                   (CUdeviceptr dst, const void* src, size_t bytes, CUstream s), (dst, src, bytes, s))           \
  STREAMHAZ_HOT_PT(X, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_params,                                         \
                   (void* dst, CUdeviceptr src, size_t bytes, CUstream s), (dst, src, bytes, s))                 \
  STREAMHAZ_HOT_PT(X, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_params,                                         \
                   (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s), (dst, src, bytes, s))           \
  STREAMHAZ_HOT_PT(X, cuMemsetD8Async, cuMemsetD8Async_params,                                                   \
                   (CUdeviceptr dst, unsigned char value, size_t n, CUstream s), (dst, value, n, s))             \
  STREAMHAZ_HOT_PT(X, cuMemsetD32Async, cuMemsetD32Async_params,                                                 \
                   (CUdeviceptr dst, unsigned int value, size_t n, CUstream s), (dst, value, n, s))              \
  STREAMHAZ_HOT_PT(X, cuEventRecord, cuEventRecord_params, (CUevent e, CUstream s), (e, s))                     \
  STREAMHAZ_HOT_PT(X, cuEventRecordWithFlags, cuEventRecordWithFlags_params,                                     \
                   (CUevent e, CUstream s, unsigned int flags), (e, s, flags))                                   \
  STREAMHAZ_HOT_PT(X, cuStreamWaitEvent, cuStreamWaitEvent_params,                                               \
                   (CUstream s, CUevent e, unsigned int flags), (s, e, flags))                                   \
  X(cuEventQuery, cuEventQuery_params, (CUevent e), (e))                                                        \
  X(cuEventCreate, cuEventCreate_params, (CUevent * event, unsigned int flags), (event, flags))                  \
  X(cuEventDestroy_v2, cuEventDestroy_v2_params, (CUevent e), (e))

enum HotIndex : size_t {
#define STREAMHAZ_INDEX(symbol, P, params, args) k_##symbol,
  STREAMHAZ_HOT_CALLS(STREAMHAZ_INDEX)
#undef STREAMHAZ_INDEX
      kHotCount
};

constexpr const char* kHotSymbols[kHotCount] = {
#define STREAMHAZ_NAME(symbol, P, params, args) #symbol,
    STREAMHAZ_HOT_CALLS(STREAMHAZ_NAME)
#undef STREAMHAZ_NAME
};

constexpr CUpti_CallbackId kHotCbids[kHotCount] = {
#define STREAMHAZ_CBID(symbol, P, params, args) CUPTI_DRIVER_TRACE_CBID_##symbol,
    STREAMHAZ_HOT_CALLS(STREAMHAZ_CBID)
#undef STREAMHAZ_CBID
};

bool is_hot(CUpti_CallbackId cbid) {
  for (CUpti_CallbackId hot : kHotCbids)
    if (hot == cbid) return true;
  return false;
}

// --- the driver's own functions -------------------------------------------------------------

using DlsymFn = void* (*)(void*, const char*);
// glibc's dlsym (the program's calls reach the one below).
DlsymFn real_dlsym() {
  static const DlsymFn fn = [] {
    for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5"})
      if (void* f = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFn>(f);
    return static_cast<DlsymFn>(nullptr);
  }();
  return fn;
}

// The driver's own address of `symbol`; null until the program has loaded the driver.
void* driver_symbol(const char* symbol) {
  static std::atomic<void*> driver{nullptr};
  void* d = driver.load(std::memory_order_acquire);
  if (!d) {
    d = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!d) return nullptr;
    driver.store(d, std::memory_order_release);
  }
  DlsymFn dl = real_dlsym();
  return dl ? dl(d, symbol) : nullptr;
}

std::array<std::atomic<void*>, kHotCount> driver_functions{};

template <class Fn> Fn driver_function(HotIndex i) {
  void* f = driver_functions[i].load(std::memory_order_relaxed);
  if (!f) {
    f = driver_symbol(kHotSymbols[i]);
    driver_functions[i].store(f, std::memory_order_relaxed);
  }
  return reinterpret_cast<Fn>(f);
}

// --- the hand-over state ----------------------------------------------------------------------

std::atomic<bool> taking{false};          // the wrappers record the hot calls
std::atomic<bool> retired{false};         // a call went around them: CUPTI records for good
std::atomic<int64_t> forwarding{0};       // calls on their way to CUPTI's callbacks
thread_local bool recording_here = false;  // this thread is in a wrapper that records its call
thread_local bool in_wrapper = false;      // this thread is in a wrapper, recording or not
std::mutex handover_mu;

// What CUPTI's callbacks saw of the hot calls while the wrappers recorded them (audits, and the
// moment of a hand-over): calls in a wrapper, and calls that reached the driver some other way.
std::atomic<uint64_t> seen_in_wrappers{0}, seen_around{0};
std::atomic<CUpti_CallbackId> first_around{0};
std::atomic<uint64_t> audits{0};

// Marks the thread as inside a wrapper for one call into the driver.
class InWrapper {
 public:
  InWrapper() : was_(in_wrapper) { in_wrapper = true; }
  ~InWrapper() { in_wrapper = was_; }
  InWrapper(const InWrapper&) = delete;
  InWrapper& operator=(const InWrapper&) = delete;

 private:
  bool was_;
};

// Decided before a wrapper is first handed out or called, and never again: the modes in which the
// wrappers may take over. Until they may, they forward uncounted.
bool armed() {
  static const bool on = [] {
    const TracerSettings& s = settings();
    return s.driver_wrappers && !s.disabled && s.footprints != Footprints::Exact &&
           (s.gpu_times.mode == GpuTimes::Steps || s.gpu_times.mode == GpuTimes::Off);
  }();
  return on;
}

// Whether the decoder records the call at its exit, with its outcome (the driver-call table's
// site; CUPTI calls back at both ends, a wrapper once).
bool recorded_at_exit(HotIndex i) {
  static const std::array<bool, kHotCount> at_exit = [] {
    std::array<bool, kHotCount> a{};
    for (size_t h = 0; h < kHotCount; ++h) {
      const DriverCall* call = find_driver_call(kHotCbids[h]);
      a[h] = call && call->site != CallSite::Entry;
    }
    return a;
  }();
  return at_exit[i];
}

// One hot call through its wrapper. `call` forwards to the driver; `params` makes CUPTI's
// parameter struct of the call.
template <class Call, class MakeParams>
STREAMHAZ_HOT CUresult hot_call(HotIndex i, Call&& call, MakeParams&& params) {
  if (!taking.load(std::memory_order_acquire)) {
    if (!armed()) return call();
    forwarding.fetch_add(1);
    if (!taking.load()) {
      InWrapper here;  // an audit that begins meanwhile must not count it as gone around
      const CUresult r = call();
      forwarding.fetch_sub(1, std::memory_order_release);
      return r;
    }
    forwarding.fetch_sub(1, std::memory_order_release);
  }
  InWrapper here;
  if (recording_here || !active_recorder()) return call();
  auto p = params();
  CUpti_CallbackData cb{};
  cb.functionName = kHotSymbols[i];
  cb.functionParams = &p;
  recording_here = true;
  CUresult r;
  if (recorded_at_exit(i)) {
    r = call();
    cb.callbackSite = CUPTI_API_EXIT;
    cb.functionReturnValue = &r;
    record_wrapped_driver_call(kHotCbids[i], cb);
  } else {
    cb.callbackSite = CUPTI_API_ENTER;
    record_wrapped_driver_call(kHotCbids[i], cb);
    r = call();
  }
  recording_here = false;
  return r;
}

}  // namespace
}  // namespace streamhaz::tracer::glue

// The wrappers, under the driver's own names: a library linked against libcuda binds to them
// first (the tracer is preloaded); protected, so that the tracer's own references to them (the
// addresses handed out below) bind here even where the tracer was not preloaded.
#define STREAMHAZ_WRAPPER(symbol, P, params, args)                                                              \
  extern "C" __attribute__((visibility("protected"))) CUresult CUDAAPI streamhaz_wrapped_##symbol params        \
      __asm__(#symbol);                                                                                         \
  extern "C" CUresult CUDAAPI streamhaz_wrapped_##symbol params {                                               \
    using namespace streamhaz::tracer::glue;                                                                    \
    const auto driver = driver_function<decltype(&streamhaz_wrapped_##symbol)>(k_##symbol);                      \
    if (!driver) return CUDA_ERROR_NOT_INITIALIZED; /* no driver loaded: the call could not have reached one */ \
    return hot_call(                                                                                            \
        k_##symbol, [&] { return driver args; }, [&] { return P{STREAMHAZ_UNPAREN args}; });                    \
  }
STREAMHAZ_HOT_CALLS(STREAMHAZ_WRAPPER)
#undef STREAMHAZ_WRAPPER

namespace streamhaz::tracer::glue {
namespace {

void* const kHotWrappers[kHotCount] = {
#define STREAMHAZ_ADDRESS(symbol, P, params, args) reinterpret_cast<void*>(&streamhaz_wrapped_##symbol),
    STREAMHAZ_HOT_CALLS(STREAMHAZ_ADDRESS)
#undef STREAMHAZ_ADDRESS
};

// The wrapper for the driver's function `fn`, or `fn` itself when it is none of the hot ones
// (another version of a call, with other parameters, passes through).
void* wrapper_of(void* fn) {
  if (!fn) return fn;
  for (size_t i = 0; i < kHotCount; ++i)
    if (driver_function<void*>(static_cast<HotIndex>(i)) == fn) return kHotWrappers[i];
  return fn;
}

// The tracer's own object.
const void* tracer_base() {
  static const void* base = [] {
    Dl_info self{};
    return dladdr(reinterpret_cast<const void*>(&wrapper_of), &self) ? self.dli_fbase : nullptr;
  }();
  return base;
}

bool in_tracer(const void* address) {
  Dl_info info{};
  return address && dladdr(address, &info) && info.dli_fbase == tracer_base();
}

// Lookups made by the tracer, CUPTI or the driver themselves get the driver's functions.
bool lookup_by_plumbing(const void* caller) {
  Dl_info info{};
  if (!dladdr(caller, &info) || !info.dli_fname) return false;
  if (info.dli_fbase == tracer_base()) return true;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return std::strncmp(base, "libcupti", 8) == 0 || std::strncmp(base, "libcuda.so", 10) == 0;
}

}  // namespace
}  // namespace streamhaz::tracer::glue

// --- where the program looks the driver up --------------------------------------------------

namespace {
using GetProcV2 = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetProcV1 = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t);
}  // namespace

extern "C" __attribute__((visibility("protected"))) CUresult CUDAAPI streamhaz_get_proc_v2(
    const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status)
    __asm__("cuGetProcAddress_v2");
extern "C" __attribute__((visibility("protected"))) CUresult CUDAAPI streamhaz_get_proc_v1(const char* symbol,
                                                                                          void** pfn, int version,
                                                                                          cuuint64_t flags)
    __asm__("cuGetProcAddress");

namespace streamhaz::tracer::glue {
namespace {

// What a lookup found, as the program gets it: cuGetProcAddress asked for itself hands out the
// tracer's, any hot function its wrapper.
void* as_handed_out(const char* symbol, void* fn, const void* caller) {
  if (!fn || std::strncmp(symbol, "cu", 2) != 0 || !armed() || lookup_by_plumbing(caller)) return fn;
  if (std::strncmp(symbol, "cuGetProcAddress", 16) == 0) {
    if (fn == driver_symbol("cuGetProcAddress_v2")) return reinterpret_cast<void*>(&streamhaz_get_proc_v2);
    if (fn == driver_symbol("cuGetProcAddress")) return reinterpret_cast<void*>(&streamhaz_get_proc_v1);
    return fn;
  }
  return wrapper_of(fn);
}

// dlsym(RTLD_NEXT, ...) means "after the caller's object", and the caller glibc would see is the
// tracer: look after the real caller's object instead, in load order.
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
          const void* base = object->dlpi_phnum
                                 ? reinterpret_cast<const char*>(object->dlpi_addr) + object->dlpi_phdr[0].p_vaddr
                                 : reinterpret_cast<const void*>(object->dlpi_addr);
          w.past = reinterpret_cast<const void*>(object->dlpi_addr) == w.caller_base || base == w.caller_base;
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

}  // namespace
}  // namespace streamhaz::tracer::glue

extern "C" CUresult CUDAAPI streamhaz_get_proc_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                                  CUdriverProcAddressQueryResult* status) {
  using namespace streamhaz::tracer::glue;
  auto real = reinterpret_cast<GetProcV2>(driver_symbol("cuGetProcAddress_v2"));
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && symbol && pfn) *pfn = as_handed_out(symbol, *pfn, __builtin_return_address(0));
  return r;
}

extern "C" CUresult CUDAAPI streamhaz_get_proc_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  using namespace streamhaz::tracer::glue;
  auto real = reinterpret_cast<GetProcV1>(driver_symbol("cuGetProcAddress"));
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && symbol && pfn) *pfn = as_handed_out(symbol, *pfn, __builtin_return_address(0));
  return r;
}

namespace streamhaz::tracer::glue {
namespace {

// The names whose lookups the tracer answers: cuGetProcAddress and the hot calls.
bool hooked_name(const char* symbol) {
  if (symbol[0] != 'c' || symbol[1] != 'u') return false;
  if (std::strncmp(symbol, "cuGetProcAddress", 16) == 0) return true;
  for (const char* hot : kHotSymbols)
    if (std::strcmp(symbol, hot) == 0) return true;
  return false;
}

}  // namespace
}  // namespace streamhaz::tracer::glue

// A hooked name's lookup, jumped to from dlsym below with the program's return address in place.
extern "C" __attribute__((visibility("hidden"))) void* streamhaz_dlsym_hooked(void* handle, const char* symbol,
                                                                              const void* caller) {
  using namespace streamhaz::tracer::glue;
  DlsymFn real = real_dlsym();
  if (!real) return nullptr;
  void* fn = handle == RTLD_NEXT ? next_after(caller, symbol) : real(handle, symbol);
  return as_handed_out(symbol, fn, caller);
}

// Where dlsym goes on: glibc's own, or the tracer's for a hooked name while the wrappers may
// take over (off, every lookup is glibc's).
extern "C" __attribute__((visibility("hidden"))) void* streamhaz_dlsym_route(void*, const char* symbol) {
  using namespace streamhaz::tracer::glue;
  if (symbol && hooked_name(symbol) && armed()) return reinterpret_cast<void*>(&streamhaz_dlsym_hooked);
  return reinterpret_cast<void*>(real_dlsym());
}

// dlsym itself. glibc's dlsym reads its caller's address (RTLD_NEXT searches after the caller's
// object, RTLD_DEFAULT in the caller's scope), so the tracer must not call it in the program's
// place: the stub asks where to go with the arguments saved, then jumps there, leaving the
// program's return address where glibc (or the hooked lookup, as its third argument) finds it.
// x86-64 only; elsewhere dlsym is not hooked and the wrappers are unreachable (CUPTI records).
#if defined(__x86_64__)
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
dlsym:
  .cfi_startproc
  push %rdi
  .cfi_adjust_cfa_offset 8
  push %rsi
  .cfi_adjust_cfa_offset 8
  sub $8, %rsp
  .cfi_adjust_cfa_offset 8
  call streamhaz_dlsym_route
  add $8, %rsp
  .cfi_adjust_cfa_offset -8
  pop %rsi
  .cfi_adjust_cfa_offset -8
  pop %rdi
  .cfi_adjust_cfa_offset -8
  test %rax, %rax
  jz 1f
  mov (%rsp), %rdx
  jmp *%rax
1:
  xor %eax, %eax
  ret
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#endif

namespace streamhaz::tracer::glue {

bool driver_wrappers_reachable() {
  static const bool reachable = [] {
    DlsymFn dl = real_dlsym();
    return dl && in_tracer(dl(RTLD_DEFAULT, "cuGetProcAddress_v2")) && in_tracer(dl(RTLD_DEFAULT, "dlsym")) &&
           in_tracer(dl(RTLD_DEFAULT, "cuLaunchKernel"));
  }();
  return reachable;
}

bool hand_hot_calls_to_wrappers() {
  std::lock_guard lock(handover_mu);
  if (!armed() || retired.load() || !driver_wrappers_reachable() || !holds_cupti()) return false;
  if (taking.load()) return true;
  if (!start_wrapper_audits()) return false;
  taking.store(true);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (forwarding.load() != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      taking.store(false);  // a call stuck in the driver: CUPTI keeps recording
      return false;
    }
    std::this_thread::yield();
  }
  for (CUpti_CallbackId cbid : kHotCbids) enable_driver_callback(cbid, false);
  return true;
}

void hand_hot_calls_to_cupti() {
  std::lock_guard lock(handover_mu);
  if (!taking.load()) return;
  for (CUpti_CallbackId cbid : kHotCbids) enable_driver_callback(cbid, true);
  taking.store(false);
}

bool wrappers_record(CUpti_CallbackId cbid) { return taking.load() && is_hot(cbid); }

bool recorded_by_wrapper(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site) {
  if (site == CUPTI_API_ENTER && taking.load(std::memory_order_relaxed) && is_hot(cbid)) {
    if (in_wrapper)
      seen_in_wrappers.fetch_add(1, std::memory_order_relaxed);
    else if (seen_around.fetch_add(1, std::memory_order_relaxed) == 0)
      first_around.store(cbid, std::memory_order_relaxed);
  }
  return recording_here;
}

bool begin_hot_call_audit() {
  std::lock_guard lock(handover_mu);
  if (!taking.load()) return false;
  for (CUpti_CallbackId cbid : kHotCbids) enable_driver_callback(cbid, true);
  audits.fetch_add(1, std::memory_order_relaxed);
  return true;
}

uint64_t end_hot_call_audit() {
  std::lock_guard lock(handover_mu);
  const uint64_t around = seen_around.load();
  if (around) {
    // CUPTI records the hot calls for the rest of the run (its callbacks on before the wrappers
    // stop recording, as in a hand-back), and the wrappers never take over again.
    retired.store(true);
    if (taking.load()) {
      for (CUpti_CallbackId cbid : kHotCbids) enable_driver_callback(cbid, true);
      taking.store(false);
    }
    return around;
  }
  if (taking.load()) {  // else handed back meanwhile: CUPTI's callbacks stay on
    for (CUpti_CallbackId cbid : kHotCbids) enable_driver_callback(cbid, false);
  }
  return 0;
}

WrapperAuditCounts wrapper_audit_counts() {
  const CUpti_CallbackId first = first_around.load();
  const DriverCall* call = seen_around.load() ? find_driver_call(first) : nullptr;
  return WrapperAuditCounts{audits.load(), seen_in_wrappers.load(), seen_around.load(), call ? call->name : ""};
}

}  // namespace streamhaz::tracer::glue
