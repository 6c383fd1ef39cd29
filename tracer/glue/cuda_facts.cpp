#include "cuda_facts.h"

#include <cupti.h>
#include <dlfcn.h>

#include <array>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "streamhaz/tracer/per_thread.h"
#include "streamhaz/tracer/self_profile.h"

namespace streamhaz::tracer::glue {

uint32_t device_of_context(CUcontext ctx) {
  // Most calls come from one context per thread: remember the last answer.
  thread_local CUcontext last_ctx = nullptr;
  thread_local uint32_t last_device = 0;
  if (ctx == nullptr) return current_device();
  if (ctx == last_ctx) return last_device;
  uint32_t device = 0;
  if (cuptiGetDeviceId(ctx, &device) != CUPTI_SUCCESS) device = 0;
  last_ctx = ctx;
  last_device = device;
  return device;
}

uint32_t current_device() {
  CUdevice d = 0;
  if (cuCtxGetDevice(&d) != CUDA_SUCCESS) return 0;
  return static_cast<uint32_t>(d);
}

std::optional<StreamInfo> query_stream(uint64_t handle) {
  CUstream s = reinterpret_cast<CUstream>(handle);
  StreamInfo info;
  CUcontext ctx = nullptr;
  if (cuStreamGetCtx(s, &ctx) == CUDA_SUCCESS) info.device = device_of_context(ctx);
  unsigned int flags = 0;
  if (cuStreamGetFlags(s, &flags) == CUDA_SUCCESS && (flags & CU_STREAM_NON_BLOCKING))
    info.flags = trace::kStreamNonBlocking;
  int priority = 0;
  if (cuStreamGetPriority(s, &priority) == CUDA_SUCCESS) info.priority = priority;
  return info;
}

MemoryKind memory_kind(uint64_t ptr) {
  unsigned int type = 0;
  // Pageable host memory is unknown to the driver: the query fails for it.
  if (cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, static_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS)
    return MemoryKind::PageableHost;
  return type == CU_MEMORYTYPE_HOST ? MemoryKind::PinnedHost : MemoryKind::Device;
}

namespace {

std::mutex layout_mu;
std::unordered_map<CUfunction, ParamLayout> layouts;

ParamLayout read_layout(CUfunction f) {
  ParamLayout layout;
  // Runtime launches hand the driver a CUkernel, on which only cuKernel* works.
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (cuKernelGetParamInfo(reinterpret_cast<CUkernel>(f), i, &offset, &size) != CUDA_SUCCESS) break;
    layout.params.emplace_back(offset, size);
  }
  if (layout.params.empty()) {
    for (size_t i = 0;; ++i) {
      size_t offset = 0, size = 0;
      if (cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS) break;
      layout.params.emplace_back(offset, size);
    }
  }
  return layout;
}

// Entries are never erased and map nodes never move: callers may keep the reference.
const ParamLayout& layout_of(CUfunction f) {
  // A training step launches a few hundred functions again and again, from two threads (the
  // program's and autograd's): each thread keeps the layouts it asked for in a direct-mapped
  // table of its own and takes the shared lock (0.45 us a call on a real step, its cache line
  // going back and forth between the threads) only for a function new to that slot.
  struct Cached {
    CUfunction f;
    const ParamLayout* layout;
  };
  constexpr size_t kSlots = 256;
  using Cache = std::array<Cached, kSlots>;
  static_assert(kSlots == 256, "the hash below keeps 8 bits");
  Cached& slot = PerThread<Cache>::get()[(reinterpret_cast<uintptr_t>(f) * 0x9E3779B97F4A7C15ull) >> 56];
  if (slot.f == f && slot.layout) return *slot.layout;
  PhaseTimer timer(Phase::ParamLayout);
  std::lock_guard lock(layout_mu);
  auto it = layouts.find(f);
  if (it == layouts.end()) it = layouts.emplace(f, read_layout(f)).first;
  slot = Cached{f, &it->second};
  return it->second;
}

}  // namespace

const ParamLayout& CudaDriverFacts::param_layout(CUfunction f) { return layout_of(f); }

const char* CudaDriverFacts::kernel_name(CUfunction f) {
  // As for layouts: runtime launches hand the driver a CUkernel.
  const char* name = nullptr;
  if (cuKernelGetName(&name, reinterpret_cast<CUkernel>(f)) == CUDA_SUCCESS && name) return name;
  if (cuFuncGetName(&name, f) == CUDA_SUCCESS && name) return name;
  return nullptr;
}

namespace {
std::mutex facts_mu;
nlohmann::json facts;
bool gathered = false;
}  // namespace

void gather_header_facts() {
  std::lock_guard lock(facts_mu);
  if (gathered) return;
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS) return;  // CUDA not up yet: try later
  gathered = true;
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    nlohmann::json d{{"index", i}};
    char name[256] = {};
    if (cuDeviceGetName(name, sizeof name - 1, dev) == CUDA_SUCCESS) d["name"] = name;
    CUuuid uuid;
    if (cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
      char text[64];
      char* p = text;
      for (int b = 0; b < 16; ++b) {
        if (b == 4 || b == 6 || b == 8 || b == 10) *p++ = '-';
        p += std::snprintf(p, 3, "%02x", static_cast<unsigned char>(uuid.bytes[b]));
      }
      d["uuid"] = std::string("GPU-") + text;
    }
    devices.push_back(d);
  }
  facts["devices"] = devices;
  int driver = 0;
  if (cuDriverGetVersion(&driver) == CUDA_SUCCESS) facts["cuda_driver"] = driver;
  // The runtime is the program's: found only if it is loaded (never load it ourselves).
  using RuntimeVersionFn = int (*)(int*);
  void* fn = dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
  if (!fn) {
    for (const char* soname : {"libcudart.so.13", "libcudart.so.12"}) {
      if (void* h = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY)) {
        fn = dlsym(h, "cudaRuntimeGetVersion");
        if (fn) break;
      }
    }
  }
  int runtime = 0;
  if (fn && reinterpret_cast<RuntimeVersionFn>(fn)(&runtime) == 0) facts["cuda_runtime"] = runtime;
}

nlohmann::json header_facts() {
  gather_header_facts();
  std::lock_guard lock(facts_mu);
  return facts;
}

}  // namespace streamhaz::tracer::glue
