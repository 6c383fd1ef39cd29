// NVTX through NVTX_INJECTION64_PATH: NVTX calls InitializeInjectionNvtx2() at the program's
// first NVTX call; we fill in the handlers for range push/pop and stream naming. Ranges are
// kept from the first call, also before CUDA starts, so operations carry the whole path.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <cstdint>
#include <cstdlib>

#include "activity.h"
#include "cuda_facts.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {
namespace {

thread_local int range_depth = 0;

int push(const char* message) {
  PhaseTimer timer(Phase::Nvtx);
  if (Recorder* rec = early_recorder()) {
    // Collection switches after the recorder's lock is released: CUPTI may call back into it.
    if (const int step = rec->nvtx_push(message ? message : ""); step >= 0) {
      on_step_begin(step);
      profile_step_began(step);
    }
  }
  return range_depth++;
}

int push_ex(const nvtxEventAttributes_t* attr) {
  const char* text = "";  // registered or wide-character messages: kept for balance only
  if (attr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII && attr->message.ascii) text = attr->message.ascii;
  return push(text);
}

int pop() {
  PhaseTimer timer(Phase::Nvtx);
  if (Recorder* rec = early_recorder(); rec && rec->nvtx_pop()) {
    on_step_end();
    profile_step_ended();
  }
  return range_depth > 0 ? --range_depth : -1;
}

int range_push_a(const char* message) { return push(message); }
int range_push_ex(const nvtxEventAttributes_t* attr) { return push_ex(attr); }
int range_pop() { return pop(); }
// Libraries keep their own ranges in their own domains (NCCL does): only the default domain
// (NULL handle) describes the program's phases. Handing out our own domain handles through
// DomainCreateA made traced NVTX users crash on the H200s, so it is not injected: until that is
// understood, every domain reads as the default one and library ranges join the path.
int domain_range_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  return domain ? 0 : push_ex(attr);
}
int domain_range_pop(nvtxDomainHandle_t domain) { return domain ? 0 : pop(); }

void name_stream(void* stream, const char* name) {
  Recorder* rec = early_recorder();
  if (!rec || !name) return;
  rec->stream_named(StreamRef{reinterpret_cast<uint64_t>(stream), current_device(), false}, name);
}
void name_cuda_stream(cudaStream_t stream, const char* name) { name_stream(stream, name); }
void name_cu_stream(CUstream stream, const char* name) { name_stream(stream, name); }

bool set(NvtxExportTableCallbacks const* callbacks, NvtxCallbackModule module, unsigned int cbid, NvtxFunctionPointer fn) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(module, &table, &size) || !table || cbid >= size) return false;
  *table[cbid] = fn;
  return true;
}

}  // namespace
}  // namespace streamhaz::tracer::glue

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  using namespace streamhaz::tracer::glue;
  if (settings().disabled) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  auto fp = [](auto f) { return reinterpret_cast<NvtxFunctionPointer>(f); };
  set(callbacks, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, fp(range_push_a));
  set(callbacks, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx, fp(range_push_ex));
  set(callbacks, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, fp(range_pop));
  set(callbacks, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx, fp(domain_range_push_ex));
  set(callbacks, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop, fp(domain_range_pop));
  set(callbacks, NVTX_CB_MODULE_CUDART, NVTX_CBID_CUDART_NameCudaStreamA, fp(name_cuda_stream));
  set(callbacks, NVTX_CB_MODULE_CUDA, NVTX_CBID_CUDA_NameCuStreamA, fp(name_cu_stream));
  return 1;  // NVTX treats 0 as failure and stays a no-op
}
