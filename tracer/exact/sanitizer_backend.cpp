// The exact footprint tier on the Compute Sanitizer API (see tracer/glue/exact_backend.h).
//   - Every module loaded is patched: streamhaz_global_access (footprint_patch.cu) runs before
//     each global load, store and atomic (NCCL's modules are left alone), while the tier is in
//     its learn phase (instrumentation_phases.h).
//   - A launch the recorder holds (a kernel of the program, not one NCCL launched) is first
//     offered to the launch memo (launch_memo.h) when the launch call enters: a launch identical
//     to earlier ones that agreed leaves with their footprint, tier memo, uninstrumented. In the
//     learn phase any other gets its context's table as callback data; when the launch ends, the
//     tracer waits for the kernel, reads back the entries it touched, tells the memo, and
//     releases the Kernel record with them. In the steady phase it runs bare.
//   - Driver-API calls go through the CUPTI decoder (sanitizer_bridge.cpp).
// libsanitizer-public.so is opened at run time, so the tracer loads where it is absent.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exact_backend.h"
#include "instrumentation_phases.h"
#include "sanitizer_api.h"
#include "streamhaz/tracer/footprint_table.h"
#include "streamhaz/tracer/launch_memo.h"
#include "streamhaz/tracer/per_thread.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {
namespace {

namespace fp = footprint;

// One context's launch table on the device, and its pinned copy on the host. Launches of a
// context are instrumented one at a time (the table is held from launch begin to launch end).
struct ContextSlot {
  void* device = nullptr;
  char* host = nullptr;
  // Of the last launch: the entries of each level the next one must clear.
  uint32_t entries_used = 0;
  uint32_t coarse_used = 0;
  bool fresh = true;  // fine_limit not written yet
  std::mutex busy;
  void forget_use() {  // unknown: the next launch clears everything
    entries_used = fp::kEntries;
    coarse_used = fp::kCoarseEntries;
  }
};

struct Backend {
  SanitizerApi api;
  bool memoise = true;
  uint32_t fine_limit = 0;  // Layout::fine_limit (0: the whole fine level)
  LaunchMemo memo;
  std::atomic<uint64_t> instrumented{0};  // launches whose table was read back
  std::atomic<uint64_t> bare{0};          // launches the steady phase ran uninstrumented, memo unknown
  std::atomic<uint64_t> coarse{0};        // instrumented launches that needed the coarse level
  std::atomic<uint64_t> during_capture{0};  // launches into a stream capture: graph nodes, not instrumented
  std::atomic<uint64_t> graph_nodes{0};   // kernel nodes of graph launches, run with no table
  std::unique_ptr<InstrumentationPhases> phases;
  std::mutex slots_mutex;
  std::map<CUcontext, ContextSlot> slots;
  std::atomic<uint32_t> next_correlation{1};
};

Backend* backend = nullptr;

struct ThreadLaunch {
  uint32_t correlation = 0;       // of the driver call in progress
  ContextSlot* slot = nullptr;    // held between launch begin and end
  LaunchKey key;                  // of the instrumented launch, for the memo
  bool key_valid = false;
  CUcontext program_launch = nullptr;  // the context of the program launch in progress
};
// Each thread's own (per_thread.h: too large for the thread-local block).
ThreadLaunch& current() { return PerThread<ThreadLaunch>::get(); }
struct MemoRanges;  // PerThread's tag for the ranges the launch memo serves, reused per thread

void on_module_loaded(const Sanitizer_ResourceModuleData& m) {
  const std::string warning = backend->phases->loaded(m.context, m.module, m.pCubin, m.cubinSize);
  if (!warning.empty()) warn(warning);
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
    if (!s->device) {
      if (b.api.alloc(context, &s->device, fp::Layout::bytes) != SANITIZER_SUCCESS ||
          b.api.alloc_host(context, reinterpret_cast<void**>(&s->host), fp::Layout::bytes) != SANITIZER_SUCCESS) {
        s->device = nullptr;
        return nullptr;
      }
      s->forget_use();  // fresh memory holds anything: the first launch clears all of it
    }
  }
  return s;
}

// Switches `context`'s instrumentation phase when due (instrumentation_phases.h). Called at the
// exit of a program launch, outside launch callbacks and NCCL calls; deferred while a stream
// capture is open, where a drain would break the capture.
void switch_phase_if_due(CUcontext context) {
  Backend& b = *backend;
  if (!b.phases->due(context)) return;
  if (Recorder* rec = active_recorder(); rec && rec->open_captures() > 0) return;
  b.phases->switch_if_due(context);
}

// A context goes: its table, phase and memo keys with it (a new context may get its handle).
void forget_context(CUcontext context) {
  Backend& b = *backend;
  b.phases->context_destroyed(context);
  b.memo.forget(reinterpret_cast<uint64_t>(context));
  std::lock_guard lock(b.slots_mutex);
  b.slots.erase(context);
}

// The entry of a launch call, after the decoder made the recorder hold its Kernel record: the
// memo serves it, or it waits for its instrumentation (learn phase), or it runs bare (steady).
void on_launch_entry(CUcontext context) {
  Recorder* rec = active_recorder();
  Backend& b = *backend;
  ThreadLaunch& launch = current();
  launch.key_valid = false;
  launch.program_launch = nullptr;
  if (!rec || !b.memoise || !context || !rec->held_launch_key(launch.key)) return;
  launch.key.context = reinterpret_cast<uint64_t>(context);
  b.phases->enter_launch(context);  // until this launch call's exit
  launch.program_launch = context;
  std::vector<KernelRange>& reused = PerThread<std::vector<KernelRange>, MemoRanges>::get();
  if (b.memo.reuse(launch.key, reused)) {
    rec->release_kernel(&reused, trace::FootprintTier::Memo);
    b.phases->launched(context, true);
    return;
  }
  b.phases->launched(context, false);
  launch.key_valid = true;
  if (!b.phases->learning(context)) {
    rec->release_kernel(nullptr);
    b.bare.fetch_add(1, std::memory_order_relaxed);
  }
}

// A patched kernel that runs without a table must see null callback data (the patch then does
// nothing): a graph node, a launch the memo served, one the steady phase or a capture left bare.
void run_without_table(const Sanitizer_LaunchData& l) {
  if (l.hLaunch && backend->phases->patched(l.module)) backend->api.set_launch_data(l.hLaunch, l.function, l.hStream, nullptr);
}

void on_launch_begin(const Sanitizer_LaunchData& l) {
  Recorder* rec = active_recorder();
  Backend& b = *backend;
  if (l.hStream) b.phases->stream_created(l.context, l.hStream);  // drained before modules change
  // Only launches still held: not NCCL's own kernels, graph nodes or launches the memo served.
  if (!rec || !rec->holds_kernel()) return run_without_table(l);
  // Work issued into a stream capture does not run now: the table's clear and read-back would
  // be captured too (or break the capture). Its record stays at the pointer tier.
  if (rec->open_captures() > 0) {
    rec->release_kernel(nullptr);
    b.during_capture.fetch_add(1, std::memory_order_relaxed);
    return run_without_table(l);
  }
  ContextSlot* s = slot_of(l.context);
  if (!s) return run_without_table(l);
  s->busy.lock();
  // A phase switch waits for this launch call to leave (its gate), so the module stays as it is
  // until this launch's table is read back.
  if (!b.phases->patched(l.module)) {
    s->busy.unlock();
    rec->release_kernel(nullptr);  // a module that could not be patched: the launch runs bare
    return;
  }
  // Clear what the last launch used (header, both levels' buckets, their entries) before this
  // kernel runs.
  char* device = static_cast<char*>(s->device);
  if (s->fresh) {
    s->fresh = false;
    std::memcpy(s->host + fp::Layout::fine_limit, &b.fine_limit, sizeof b.fine_limit);
    b.api.to_device(device + fp::Layout::fine_limit, s->host + fp::Layout::fine_limit, sizeof b.fine_limit, l.hStream);
  }
  b.api.memset(device, 0, sizeof(fp::Header), l.hStream);
  b.api.memset(device + fp::Layout::buckets, 0, fp::Layout::entries - fp::Layout::buckets, l.hStream);
  if (s->entries_used)
    b.api.memset(device + fp::Layout::entries, 0, uint64_t{s->entries_used} * sizeof(fp::Entry), l.hStream);
  if (s->coarse_used)
    b.api.memset(device + fp::Layout::coarse_entries, 0, uint64_t{s->coarse_used} * sizeof(fp::Entry), l.hStream);
  s->entries_used = s->coarse_used = 0;
  if (b.api.set_launch_data(l.hLaunch, l.function, l.hStream, s->device) != SANITIZER_SUCCESS) {
    s->busy.unlock();
    return;
  }
  current().slot = s;
}

// A kernel node of a graph launch: graph kernels keep the footprint their capture gave them
// (pointer tier, or memo), and run patched code with no table.
void on_graph_node_launch(const Sanitizer_GraphNodeLaunchData& n) {
  if (n.nodeType != CU_GRAPH_NODE_TYPE_KERNEL) return;
  backend->graph_nodes.fetch_add(1, std::memory_order_relaxed);
  run_without_table(n.launchData);
}

void on_launch_end(const Sanitizer_LaunchData& l) {
  ThreadLaunch& launch = current();
  ContextSlot* s = launch.slot;
  if (!s) return;
  launch.slot = nullptr;
  Backend& b = *backend;
  std::vector<KernelRange> ranges;
  bool coarse = false;
  bool read = b.api.synchronize(l.hStream) == SANITIZER_SUCCESS &&
              b.api.to_host(s->host, s->device, sizeof(fp::Header), l.hStream) == SANITIZER_SUCCESS;
  if (read) {
    fp::Header header;
    std::memcpy(&header, s->host, sizeof header);
    const uint32_t count = std::min(header.used, fp::kEntries);
    const uint32_t coarse_count = std::min(header.coarse_used, fp::kCoarseEntries);
    char* device = static_cast<char*>(s->device);
    if (count)
      read = b.api.to_host(s->host + fp::Layout::entries, device + fp::Layout::entries, uint64_t{count} * sizeof(fp::Entry),
                           l.hStream) == SANITIZER_SUCCESS;
    if (read && coarse_count)
      read = b.api.to_host(s->host + fp::Layout::coarse_entries, device + fp::Layout::coarse_entries,
                           uint64_t{coarse_count} * sizeof(fp::Entry), l.hStream) == SANITIZER_SUCCESS;
    s->entries_used = count;
    s->coarse_used = coarse_count;
    if (read)
      for (const fp::TouchedRange& t :
           fp::decode(header, reinterpret_cast<const fp::Entry*>(s->host + fp::Layout::entries), count,
                      reinterpret_cast<const fp::Entry*>(s->host + fp::Layout::coarse_entries), coarse_count)) {
        ranges.push_back({t.lo, t.hi, static_cast<trace::AccessMode>(t.mode), !t.fine()});
        coarse |= !t.fine();
      }
  }
  s->busy.unlock();
  if (read) b.instrumented.fetch_add(1, std::memory_order_relaxed);
  if (coarse) b.coarse.fetch_add(1, std::memory_order_relaxed);
  // A coarse footprint is not memoised: an identical launch is instrumented again.
  if (read && launch.key_valid && !coarse) b.memo.observe(launch.key, ranges);
  if (Recorder* rec = active_recorder()) rec->release_kernel(read ? &ranges : nullptr);
}

void on_driver_call(Sanitizer_CallbackId cbid, const Sanitizer_CallbackData& cb) {
  ThreadLaunch& launch = current();
  SanitizerDriverCall call;
  call.exit = cb.callbackSite == SANITIZER_API_EXIT;
  if (!call.exit) launch.correlation = backend->next_correlation.fetch_add(1, std::memory_order_relaxed);
  call.function_name = cb.functionName;
  call.params = cb.functionParams;
  call.return_value = cb.functionReturnValue;
  call.symbol_name = cb.symbolName;
  call.context = cb.context;
  call.correlation = launch.correlation;
  decode_sanitizer_driver_call(cbid, call);
  // Only launch calls can hold a record, so other calls do not take the recorder's lock here.
  if (!cb.functionName || std::strncmp(cb.functionName, "cuLaunch", 8) != 0) return;
  if (!call.exit) return on_launch_entry(cb.context);
  // A launch that ended without its launch callbacks (it failed), or without the end one: its
  // record leaves bare, and a table it took is given back unread.
  if (ContextSlot* s = launch.slot) {
    launch.slot = nullptr;
    s->forget_use();
    s->busy.unlock();
  }
  if (Recorder* rec = active_recorder()) rec->release_kernel(nullptr);
  if (CUcontext context = launch.program_launch) {
    launch.program_launch = nullptr;
    backend->phases->leave_launch(context);
    switch_phase_if_due(context);
  }
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
        else if (cbid == SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING) {
          const auto& m = *static_cast<const Sanitizer_ResourceModuleData*>(data);
          backend->phases->unloading(m.module);
          backend->memo.forget(reinterpret_cast<uint64_t>(m.context));
        } else if (cbid == SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED) {
          sanitizer_context_created();
          backend->phases->context_created(static_cast<const Sanitizer_ResourceContextData*>(data)->context);
        } else if (cbid == SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
          forget_context(static_cast<const Sanitizer_ResourceContextData*>(data)->context);
        } else if (cbid == SANITIZER_CBID_RESOURCE_STREAM_CREATED) {
          const auto& st = *static_cast<const Sanitizer_ResourceStreamData*>(data);
          backend->phases->stream_created(st.context, st.hStream);
        } else if (cbid == SANITIZER_CBID_RESOURCE_STREAM_DESTROY_STARTING) {
          backend->phases->stream_destroyed(static_cast<const Sanitizer_ResourceStreamData*>(data)->hStream);
        }
        break;
      case SANITIZER_CB_DOMAIN_LAUNCH:
        if (cbid == SANITIZER_CBID_LAUNCH_BEGIN) on_launch_begin(*static_cast<const Sanitizer_LaunchData*>(data));
        else if (cbid == SANITIZER_CBID_LAUNCH_END) on_launch_end(*static_cast<const Sanitizer_LaunchData*>(data));
        break;
      case SANITIZER_CB_DOMAIN_GRAPHS:
        if (cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN)
          on_graph_node_launch(*static_cast<const Sanitizer_GraphNodeLaunchData*>(data));
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

bool start_exact_backend(ExactLaunches launches, uint32_t fine_regions, std::string& why_not) {
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
  backend->memoise = launches == ExactLaunches::Memo;
  backend->fine_limit = fine_regions;
  Sanitizer_SubscriberHandle subscriber;
  SanitizerResult r = backend->api.subscribe(&subscriber, on_sanitizer_callback, nullptr);
  if (r != SANITIZER_SUCCESS) {
    why_not = "cannot subscribe to the Compute Sanitizer API (" + backend->api.text(r) + "; another tool holds it)";
    return false;
  }
  backend->phases =
      std::make_unique<InstrumentationPhases>(backend->api, subscriber, patch_file_beside_library(), backend->memoise);
  for (Sanitizer_CallbackDomain d : {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CB_DOMAIN_RESOURCE, SANITIZER_CB_DOMAIN_LAUNCH,
                                     SANITIZER_CB_DOMAIN_GRAPHS})
    backend->api.enable_domain(1, subscriber, d);
  return true;
}

std::string exact_backend_summary() {
  if (!backend || !backend->phases) return {};
  const uint64_t instrumented = backend->instrumented.load();
  const LaunchMemo::Counts m = backend->memo.counts();
  if (instrumented + m.reused == 0) return {};  // a process that launched nothing (a launcher)
  // Launches the tier could not instrument exactly, said only when there were any.
  std::string extra;
  if (const uint64_t n = backend->coarse.load())
    extra += ", " + std::to_string(n) + " touched more than 1 GiB (tier coarse, 32 KiB granules)";
  if (const uint64_t n = backend->during_capture.load())
    extra += ", " + std::to_string(n) + " captured into graphs (pointer tier)";
  if (const uint64_t n = backend->graph_nodes.load()) extra += ", " + std::to_string(n) + " graph kernel nodes run";
  if (!backend->memoise)
    return "exact footprints: " + std::to_string(instrumented) + " launches instrumented (--exact-launches every)" + extra;
  const InstrumentationPhases::Counts p = backend->phases->counts();
  return "exact footprints: " + std::to_string(instrumented) + " launches instrumented, " + std::to_string(m.reused) +
         " served by the launch memo (tier memo), " + std::to_string(backend->bare.load()) +
         " unknown to it run bare in the steady phase (pointer tier), " + std::to_string(m.varying_functions) +
         " kernels found data-dependent; instrumentation taken off " + std::to_string(p.to_steady) +
         " times, put back " + std::to_string(p.to_learn) + extra;
}

}  // namespace streamhaz::tracer::glue
