#include "instrumentation_phases.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace streamhaz::tracer::glue {
namespace {

// NCCL's device code: its kernel names are in the module image.
bool is_nccl_module(const char* image, size_t bytes) {
  static const std::string_view marker = "ncclDevKernel";
  return image && std::search(image, image + bytes, marker.begin(), marker.end()) != image + bytes;
}

}  // namespace

std::string InstrumentationPhases::loaded(CUcontext context, CUmodule module, const char* image, size_t bytes) {
  std::lock_guard lock(mu_);
  std::string warning;
  if (contexts_with_patches_.insert(context).second) {
    SanitizerResult r = api_.add_patches(patch_file_.c_str(), context);
    if (r != SANITIZER_SUCCESS) warning = "exact footprints: cannot load " + patch_file_ + ": " + api_.text(r);
  }
  // NCCL calls keep their API-tier footprint, and instrumenting its spin loops would only slow them.
  if (is_nccl_module(image, bytes)) return warning;
  modules_[module] = learning() && patch(module);
  return warning;
}

// cp.async reads are not global accesses to the Sanitizer; bulk tensor copies (TMA) have no
// instrumentation point at all (docs/footprints.md).
bool InstrumentationPhases::patch(CUmodule module) {
  const bool loads = api_.patch_instructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, module,
                                             "streamhaz_global_access") == SANITIZER_SUCCESS;
  const bool async =
      api_.patch_instructions(SANITIZER_INSTRUCTION_MEMCPY_ASYNC, module, "streamhaz_async_copy") == SANITIZER_SUCCESS;
  return (loads || async) && api_.patch_module(module) == SANITIZER_SUCCESS;
}

bool InstrumentationPhases::patched(CUmodule module) {
  std::lock_guard lock(mu_);
  auto it = modules_.find(module);
  return it != modules_.end() && it->second;
}

void InstrumentationPhases::launched(bool served_by_memo) {
  if (!switching_) return;
  std::lock_guard lock(mu_);
  if (switch_.launched(served_by_memo)) due_ = true;
}

void InstrumentationPhases::context_created(CUcontext context) {
  Sanitizer_StreamHandle null_stream = nullptr;
  if (api_.stream_handle(context, nullptr, &null_stream) == SANITIZER_SUCCESS && null_stream) stream_created(null_stream);
}

void InstrumentationPhases::stream_created(Sanitizer_StreamHandle stream) {
  std::lock_guard lock(mu_);
  streams_.insert(stream);
}

void InstrumentationPhases::stream_destroyed(Sanitizer_StreamHandle stream) {
  std::lock_guard lock(mu_);
  streams_.erase(stream);
}

void InstrumentationPhases::drain_streams() {
  for (Sanitizer_StreamHandle s : streams_) api_.synchronize(s);
}

void InstrumentationPhases::enter_steady() {
  drain_streams();
  for (auto& [module, patched] : modules_)
    if (patched && api_.unpatch_module(module) == SANITIZER_SUCCESS) patched = false;
  api_.enable_domain(0, subscriber_, SANITIZER_CB_DOMAIN_LAUNCH);
  learning_.store(false, std::memory_order_release);
  switch_.switched();
  ++counts_.to_steady;
}

void InstrumentationPhases::enter_learn() {
  drain_streams();
  for (auto& [module, patched] : modules_)
    if (!patched) patched = patch(module);
  api_.enable_domain(1, subscriber_, SANITIZER_CB_DOMAIN_LAUNCH);
  learning_.store(true, std::memory_order_release);
  switch_.switched();
  ++counts_.to_learn;
}

void InstrumentationPhases::maintain() {
  std::lock_guard lock(mu_);
  if (!due_) return;
  due_ = false;
  if (learning()) enter_steady();
  else enter_learn();
}

InstrumentationPhases::Counts InstrumentationPhases::counts() {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace streamhaz::tracer::glue
