#include "instrumentation_phases.h"

#include <algorithm>
#include <string_view>

namespace streamhaz::tracer::glue {
namespace {

// NCCL's device code: its kernel names are in the module image.
bool is_nccl_module(const char* image, size_t bytes) {
  static const std::string_view marker = "ncclDevKernel";
  return image && std::search(image, image + bytes, marker.begin(), marker.end()) != image + bytes;
}

}  // namespace

std::string InstrumentationPhases::loaded(CUcontext context, CUmodule module, const char* image, size_t bytes) {
  std::lock_guard patching(patch_mu_);
  std::string warning;
  bool first_in_context;
  {
    std::lock_guard lock(mu_);
    first_in_context = contexts_with_patches_.insert(context).second;
  }
  if (first_in_context) {
    SanitizerResult r = api_.add_patches(patch_file_.c_str(), context);
    if (r != SANITIZER_SUCCESS) warning = "exact footprints: cannot load " + patch_file_ + ": " + api_.text(r);
  }
  // NCCL calls keep their API-tier footprint, and instrumenting its spin loops would only slow them.
  if (is_nccl_module(image, bytes)) return warning;
  const bool patch_now = learning(context);
  const bool patched = patch_now && patch(module);
  std::lock_guard lock(mu_);
  modules_[module] = Module{context, patched};
  return warning;
}

// Patched means global loads, stores and atomics are: a module with only its cp.async patched
// would report tables without them. cp.async reads are not global accesses to the Sanitizer;
// bulk tensor copies (TMA) have no instrumentation point at all (docs/footprints.md).
bool InstrumentationPhases::patch(CUmodule module) {
  const bool loads = api_.patch_instructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, module,
                                             "streamhaz_global_access") == SANITIZER_SUCCESS;
  api_.patch_instructions(SANITIZER_INSTRUCTION_MEMCPY_ASYNC, module, "streamhaz_async_copy");
  return loads && api_.patch_module(module) == SANITIZER_SUCCESS;
}

void InstrumentationPhases::unloading(CUmodule module) {
  std::lock_guard lock(mu_);
  modules_.erase(module);
}

bool InstrumentationPhases::learning(CUcontext context) {
  std::lock_guard lock(mu_);
  auto it = contexts_.find(context);
  return it == contexts_.end() || it->second.phase.learning();
}

bool InstrumentationPhases::patched(CUmodule module) {
  std::lock_guard lock(mu_);
  auto it = modules_.find(module);
  return it != modules_.end() && it->second.patched;
}

std::shared_mutex& InstrumentationPhases::gate(CUcontext context) {
  // Twice per program launch: a thread keeps launching on one context, and gates are never
  // erased, so the last one found stays valid without mu_.
  thread_local CUcontext last_context = nullptr;
  thread_local std::shared_mutex* last_gate = nullptr;
  if (context == last_context && last_gate) return *last_gate;
  std::lock_guard lock(mu_);
  std::unique_ptr<std::shared_mutex>& g = gates_[context];
  if (!g) g = std::make_unique<std::shared_mutex>();
  last_context = context;
  last_gate = g.get();
  return *g;
}

void InstrumentationPhases::enter_launch(CUcontext context) {
  if (switching_) gate(context).lock_shared();
}

void InstrumentationPhases::leave_launch(CUcontext context) {
  if (switching_) gate(context).unlock_shared();
}

void InstrumentationPhases::launched(CUcontext context, bool served_by_memo) {
  if (!switching_) return;
  std::lock_guard lock(mu_);
  Context& c = contexts_[context];
  if (c.phase.launched(served_by_memo)) c.due = true;
}

bool InstrumentationPhases::due(CUcontext context) {
  if (!switching_) return false;
  std::lock_guard lock(mu_);
  auto it = contexts_.find(context);
  return it != contexts_.end() && it->second.due;
}

void InstrumentationPhases::context_created(CUcontext context) {
  Sanitizer_StreamHandle null_stream = nullptr;
  if (api_.stream_handle(context, nullptr, &null_stream) == SANITIZER_SUCCESS && null_stream)
    stream_created(context, null_stream);
}

void InstrumentationPhases::context_destroyed(CUcontext context) {
  std::lock_guard lock(mu_);
  contexts_.erase(context);
  contexts_with_patches_.erase(context);
  std::erase_if(modules_, [context](const auto& m) { return m.second.context == context; });
  set_launch_callbacks();
}

void InstrumentationPhases::stream_created(CUcontext context, Sanitizer_StreamHandle stream) {
  std::lock_guard lock(mu_);
  contexts_[context].streams.insert(stream);
}

void InstrumentationPhases::stream_destroyed(Sanitizer_StreamHandle stream) {
  std::lock_guard lock(mu_);
  for (auto& [context, c] : contexts_) c.streams.erase(stream);
}

void InstrumentationPhases::set_launch_callbacks() {
  bool any_learning = contexts_.empty();
  for (const auto& [context, c] : contexts_) any_learning |= c.phase.learning();
  if (any_learning == launch_callbacks_) return;
  api_.enable_domain(any_learning ? 1 : 0, subscriber_, SANITIZER_CB_DOMAIN_LAUNCH);
  launch_callbacks_ = any_learning;
}

void InstrumentationPhases::switch_if_due(CUcontext context) {
  if (!due(context)) return;
  // No program launch of this context enters or is under way until the switch is done.
  std::unique_lock closed(gate(context));
  std::vector<Sanitizer_StreamHandle> streams;
  {
    std::lock_guard lock(mu_);
    auto it = contexts_.find(context);
    if (it == contexts_.end() || !it->second.due) return;
    streams.assign(it->second.streams.begin(), it->second.streams.end());
  }
  // Drained without mu_: another GPU's launch, which a collective here may wait for, takes it.
  for (Sanitizer_StreamHandle s : streams) api_.synchronize(s);

  std::lock_guard patching(patch_mu_);
  std::lock_guard lock(mu_);
  auto it = contexts_.find(context);
  if (it == contexts_.end() || !it->second.due) return;
  Context& c = it->second;
  c.due = false;
  const bool to_learn = !c.phase.learning();
  for (auto& [module, m] : modules_) {
    if (m.context != context) continue;
    // Marked unpatched even when the Sanitizer refuses: a launch then runs bare, never with a
    // table that a half-patched module would leave empty.
    if (to_learn && !m.patched) m.patched = patch(module);
    else if (!to_learn && m.patched) {
      api_.unpatch_module(module);
      m.patched = false;
    }
  }
  c.phase.switched();
  ++(to_learn ? counts_.to_learn : counts_.to_steady);
  set_launch_callbacks();
}

InstrumentationPhases::Counts InstrumentationPhases::counts() {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace streamhaz::tracer::glue
