// The exact footprint tier on the Compute Sanitizer API (see tracer/glue/exact_backend.h).
//   - Every module loaded is patched: streamhaz_global_access (footprint_patch.cu) runs before
//     each global load, store and atomic. NCCL's modules are left alone: NCCL calls keep their
//     API-tier footprint, and instrumenting its spin loops would only slow them.
//   - A launch the recorder holds (a kernel of the program, not one NCCL launched) gets its
//     context's table as callback data; when the launch call ends, the tracer waits for the
//     kernel, reads back the entries it touched and releases the Kernel record with them.
//   - Driver-API calls go through the CUPTI decoder (sanitizer_bridge.cpp).
// libsanitizer-public.so is opened at run time, so the tracer loads where it is absent.
#include <dlfcn.h>
#include <sanitizer.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "exact_backend.h"
#include "streamhaz/tracer/footprint_table.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {
namespace {

namespace fp = footprint;

// The Sanitizer API entry points the backend uses, bound with dlsym.
struct SanitizerApi {
  decltype(&sanitizerSubscribe) subscribe = nullptr;
  decltype(&sanitizerEnableDomain) enable_domain = nullptr;
  decltype(&sanitizerAddPatchesFromFile) add_patches = nullptr;
  decltype(&sanitizerPatchInstructions) patch_instructions = nullptr;
  decltype(&sanitizerPatchModule) patch_module = nullptr;
  decltype(&sanitizerSetLaunchCallbackData) set_launch_data = nullptr;
  decltype(&sanitizerAlloc) alloc = nullptr;
  decltype(&sanitizerAllocHost) alloc_host = nullptr;
  decltype(&sanitizerMemset) memset = nullptr;
  decltype(&sanitizerMemcpyDeviceToHost) to_host = nullptr;
  decltype(&sanitizerStreamSynchronize) synchronize = nullptr;
  decltype(&sanitizerGetResultString) result_string = nullptr;

  bool bind(void* lib) {
    auto get = [lib](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    return get(subscribe, "sanitizerSubscribe") && get(enable_domain, "sanitizerEnableDomain") &&
           get(add_patches, "sanitizerAddPatchesFromFile") && get(patch_instructions, "sanitizerPatchInstructions") &&
           get(patch_module, "sanitizerPatchModule") && get(set_launch_data, "sanitizerSetLaunchCallbackData") &&
           get(alloc, "sanitizerAlloc") && get(alloc_host, "sanitizerAllocHost") && get(memset, "sanitizerMemset") &&
           get(to_host, "sanitizerMemcpyDeviceToHost") && get(synchronize, "sanitizerStreamSynchronize") &&
           get(result_string, "sanitizerGetResultString");
  }
};

// One context's launch table on the device, and its pinned copy on the host. Launches of a
// context are instrumented one at a time (the table is held from launch begin to launch end).
struct ContextSlot {
  void* device = nullptr;
  char* host = nullptr;
  uint32_t entries_used = 0;  // of the last launch: what the next one must clear
  std::mutex busy;
};

struct Backend {
  SanitizerApi api;
  std::string patch_file;
  std::mutex patch_mutex;  // the patching calls must not run concurrently
  std::set<CUcontext> patched_contexts;
  std::mutex slots_mutex;
  std::map<CUcontext, ContextSlot> slots;
  std::atomic<uint32_t> next_correlation{1};
};

Backend* backend = nullptr;

struct ThreadLaunch {
  uint32_t correlation = 0;       // of the driver call in progress
  ContextSlot* slot = nullptr;    // held between launch begin and end
};
thread_local ThreadLaunch current;

std::string result_text(SanitizerResult r) {
  const char* text = nullptr;
  if (backend && backend->api.result_string) backend->api.result_string(r, &text);
  return text ? text : "error " + std::to_string(static_cast<int>(r));
}

// NCCL's device code: its kernel names are in the module image.
bool is_nccl_module(const char* image, size_t bytes) {
  static const std::string_view marker = "ncclDevKernel";
  return image && std::search(image, image + bytes, marker.begin(), marker.end()) != image + bytes;
}

void on_module_loaded(const Sanitizer_ResourceModuleData& m) {
  Backend& b = *backend;
  std::lock_guard lock(b.patch_mutex);
  if (b.patched_contexts.insert(m.context).second) {
    SanitizerResult r = b.api.add_patches(b.patch_file.c_str(), m.context);
    if (r != SANITIZER_SUCCESS) warn("exact footprints: cannot load " + b.patch_file + ": " + result_text(r));
  }
  if (is_nccl_module(m.pCubin, m.cubinSize)) return;
  // cp.async reads are not global accesses to the Sanitizer; bulk tensor copies (TMA) have no
  // instrumentation point at all (docs/footprints.md).
  const bool loads = b.api.patch_instructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, m.module,
                                              "streamhaz_global_access") == SANITIZER_SUCCESS;
  const bool async = b.api.patch_instructions(SANITIZER_INSTRUCTION_MEMCPY_ASYNC, m.module, "streamhaz_async_copy") ==
                     SANITIZER_SUCCESS;
  if (loads || async) b.api.patch_module(m.module);
}

ContextSlot* slot_of(CUcontext context) {
  Backend& b = *backend;
  ContextSlot* s;
  {
    std::lock_guard lock(b.slots_mutex);
    s = &b.slots[context];
  }
  if (!s->device) {
    std::lock_guard lock(s->busy);
    if (!s->device && (b.api.alloc(context, &s->device, fp::Layout::bytes) != SANITIZER_SUCCESS ||
                       b.api.alloc_host(context, reinterpret_cast<void**>(&s->host), fp::Layout::bytes) != SANITIZER_SUCCESS)) {
      s->device = nullptr;
      return nullptr;
    }
  }
  return s;
}

void on_launch_begin(const Sanitizer_LaunchData& l) {
  Recorder* rec = active_recorder();
  // Only launches the recorder holds: NCCL's own kernels and graph nodes run uninstrumented.
  if (!rec || !rec->holds_kernel()) return;
  ContextSlot* s = slot_of(l.context);
  if (!s) return;
  s->busy.lock();
  Backend& b = *backend;
  // Clear what the last launch used (header, buckets, its entries) before this kernel runs.
  b.api.memset(s->device, 0, fp::Layout::entries, l.hStream);
  if (s->entries_used)
    b.api.memset(static_cast<char*>(s->device) + fp::Layout::entries, 0, uint64_t{s->entries_used} * sizeof(fp::Entry),
                 l.hStream);
  if (b.api.set_launch_data(l.hLaunch, l.function, l.hStream, s->device) != SANITIZER_SUCCESS) {
    s->entries_used = 0;
    s->busy.unlock();
    return;
  }
  current.slot = s;
}

void on_launch_end(const Sanitizer_LaunchData& l) {
  ContextSlot* s = current.slot;
  if (!s) return;
  current.slot = nullptr;
  Backend& b = *backend;
  std::vector<KernelRange> ranges;
  bool read = b.api.synchronize(l.hStream) == SANITIZER_SUCCESS &&
              b.api.to_host(s->host, s->device, sizeof(fp::Header), l.hStream) == SANITIZER_SUCCESS;
  if (read) {
    fp::Header header;
    std::memcpy(&header, s->host, sizeof header);
    const uint32_t count = std::min(header.used, fp::kEntries);
    if (count)
      read = b.api.to_host(s->host + fp::Layout::entries, static_cast<char*>(s->device) + fp::Layout::entries,
                           uint64_t{count} * sizeof(fp::Entry), l.hStream) == SANITIZER_SUCCESS;
    s->entries_used = count;
    if (read)
      for (const fp::TouchedRange& t :
           fp::decode(header, reinterpret_cast<const fp::Entry*>(s->host + fp::Layout::entries), count))
        ranges.push_back({t.lo, t.hi, static_cast<trace::AccessMode>(t.mode)});
  }
  s->busy.unlock();
  if (Recorder* rec = active_recorder()) rec->release_kernel(read ? &ranges : nullptr);
}

void on_driver_call(Sanitizer_CallbackId cbid, const Sanitizer_CallbackData& cb) {
  SanitizerDriverCall call;
  call.exit = cb.callbackSite == SANITIZER_API_EXIT;
  if (!call.exit) current.correlation = backend->next_correlation.fetch_add(1, std::memory_order_relaxed);
  call.function_name = cb.functionName;
  call.params = cb.functionParams;
  call.return_value = cb.functionReturnValue;
  call.symbol_name = cb.symbolName;
  call.context = cb.context;
  call.correlation = current.correlation;
  decode_sanitizer_driver_call(cbid, call);
  // A launch that ended without its launch callbacks (it failed): its record leaves bare. Only
  // launch calls can hold one, so other calls do not take the recorder's lock here.
  if (call.exit && !current.slot && cb.functionName && std::strncmp(cb.functionName, "cuLaunch", 8) == 0)
    if (Recorder* rec = active_recorder()) rec->release_kernel(nullptr);
}

void on_sanitizer_callback(void*, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  try {
    switch (domain) {
      case SANITIZER_CB_DOMAIN_DRIVER_API:
        on_driver_call(cbid, *static_cast<const Sanitizer_CallbackData*>(data));
        break;
      case SANITIZER_CB_DOMAIN_RESOURCE:
        if (cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED)
          on_module_loaded(*static_cast<const Sanitizer_ResourceModuleData*>(data));
        else if (cbid == SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED)
          sanitizer_context_created();
        break;
      case SANITIZER_CB_DOMAIN_LAUNCH:
        if (cbid == SANITIZER_CBID_LAUNCH_BEGIN) on_launch_begin(*static_cast<const Sanitizer_LaunchData*>(data));
        else if (cbid == SANITIZER_CBID_LAUNCH_END) on_launch_end(*static_cast<const Sanitizer_LaunchData*>(data));
        break;
      default:
        break;
    }
  } catch (...) {
    // Out of memory: losing a record beats crashing the program; the trace counts it.
    if (Recorder* rec = active_recorder()) rec->note_dropped();
  }
}

// The device patch, built beside this library (lib/streamhaz-footprint-patch.fatbin).
std::string patch_file_beside_library() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&patch_file_beside_library), &info) || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/streamhaz-footprint-patch.fatbin";
}

void* open_sanitizer_library() {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("STREAMHAZ_SANITIZER_LIB")) candidates.push_back(p);
  candidates.push_back("libsanitizer-public.so");
  for (const char* root : {static_cast<const char*>(std::getenv("CUDA_HOME")), static_cast<const char*>(std::getenv("CUDA_PATH")), "/usr/local/cuda"})
    if (root && *root) candidates.push_back(std::string(root) + "/compute-sanitizer/libsanitizer-public.so");
  for (const std::string& c : candidates)
    if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

}  // namespace

bool start_exact_backend(std::string& why_not) {
  void* lib = open_sanitizer_library();
  if (!lib) {
    why_not = "exact footprints need the Compute Sanitizer API (libsanitizer-public.so; set STREAMHAZ_SANITIZER_LIB)";
    return false;
  }
  backend = new Backend;
  if (!backend->api.bind(lib)) {
    why_not = "the Compute Sanitizer library lacks entry points the exact tier needs";
    return false;
  }
  backend->patch_file = patch_file_beside_library();
  Sanitizer_SubscriberHandle subscriber;
  SanitizerResult r = backend->api.subscribe(&subscriber, on_sanitizer_callback, nullptr);
  if (r != SANITIZER_SUCCESS) {
    why_not = "cannot subscribe to the Compute Sanitizer API (" + result_text(r) + "; another tool holds it)";
    return false;
  }
  for (Sanitizer_CallbackDomain d : {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CB_DOMAIN_RESOURCE, SANITIZER_CB_DOMAIN_LAUNCH})
    backend->api.enable_domain(1, subscriber, d);
  return true;
}

}  // namespace streamhaz::tracer::glue
