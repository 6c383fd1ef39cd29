#include "driver_decode.h"
#include "streamhaz/tracer/hot_path.h"
#include "streamhaz/tracer/per_thread.h"

#include <array>
#include <cstring>
#include <string>

namespace streamhaz::tracer::glue {

using trace::AllocKind;
using trace::MemcpyKind;

namespace {

struct LaunchArgumentBytes;  // PerThread's tag for a launch's copied argument bytes

// Parameter structs of the call families that share a layout prefix.
struct LaunchPrefix {  // cuLaunchKernel, cuLaunchCooperativeKernel
  CUfunction f;
  unsigned int grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem;
  CUstream stream;
  void** kernel_params;
};
struct InstantiatePrefix {  // every cuGraphInstantiate variant
  CUgraphExec* exec;
  CUgraph graph;
};
struct StreamFirst {  // capture begin variants
  CUstream stream;
};

uint64_t u64(const void* p) { return reinterpret_cast<uint64_t>(p); }
uint64_t u64(CUdeviceptr p) { return static_cast<uint64_t>(p); }

template <class P> const P& params(const CUpti_CallbackData& cb) { return *static_cast<const P*>(cb.functionParams); }

CUresult result_of(const CUpti_CallbackData& cb) {
  return cb.functionReturnValue ? *static_cast<const CUresult*>(cb.functionReturnValue) : CUDA_ERROR_UNKNOWN;
}

StreamRef stream_ref(Decoder& d, CUstream s, const CUpti_CallbackData& cb, bool per_thread) {
  return StreamRef{u64(s), d.facts.device_of_context(cb.context), per_thread};
}

// Synchronous calls run on the legacy stream, or for _ptds on the thread's own.
StreamRef default_stream(Decoder& d, const CUpti_CallbackData& cb, bool per_thread) {
  return stream_ref(d, nullptr, cb, per_thread);
}

uint32_t device(Decoder& d, const CUpti_CallbackData& cb) { return d.facts.device_of_context(cb.context); }

uint32_t sync_flag(bool sync) { return sync ? uint32_t{trace::kMemSync} : 0u; }

// Whether a call's params name a stream (cuMemcpyAsync) or it runs synchronously (cuMemcpy).
template <class P> constexpr bool kNamesStream = requires(const P& p) { p.hStream; };

// The stream a copy or memset runs on: the one it names, else the default stream.
template <class P> StreamRef call_stream(Decoder& d, const P& p, const CUpti_CallbackData& cb, bool pt) {
  if constexpr (kNamesStream<P>) {
    return stream_ref(d, p.hStream, cb, pt);
  } else {
    return default_stream(d, cb, pt);
  }
}

// --- kernels and other stream work ------------------------------------------------------

// A C string, measured by the recorder only for a function it has not named yet; a call that
// came without one (through a wrapper) asks the driver, again only then.
LazyName kernel_name(Decoder& d, const CUpti_CallbackData& cb, CUfunction f) {
  if (cb.symbolName) return cb.symbolName;
  return LazyName(
      [](const void* facts, uint64_t fn) -> const char* {
        const char* name = static_cast<DriverFacts*>(const_cast<void*>(facts))->kernel_name(reinterpret_cast<CUfunction>(fn));
        return name ? name : "?";
      },
      &d.facts, u64(f));
}

void launch(Decoder& d, const CUpti_CallbackData& cb, CUfunction f, const unsigned (&grid)[3],
            const unsigned (&block)[3], unsigned smem, CUstream s, void** kernel_params, void** extra, bool pt) {
  KernelLaunch k;
  k.function = u64(f);
  k.name = kernel_name(d, cb, f);
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = grid[i];
    k.block[i] = block[i];
  }
  k.shared_mem = smem;
  if (d.facts.wants_param_bytes()) {
    // Reused per thread: the recorder copies the bytes into its own reused record.
    std::string& bytes = PerThread<std::string, LaunchArgumentBytes>::get();
    PhaseTimer timer(Phase::ParamBytes);
    if (kernel_params) {
      const ParamLayout& layout = d.facts.param_layout(f);
      kernel_param_bytes(layout, kernel_params, nullptr, bytes);
      k.layout = &layout.params;
    } else {
      kernel_param_bytes(ParamLayout{}, nullptr, extra, bytes);
    }
    k.params = bytes;
  }
  d.rec.kernel_launched(stream_ref(d, s, cb, pt), cb.correlationId, k);
}

void launch_kernel(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<cuLaunchKernel_params>(cb);
  launch(d, cb, p.f, {p.gridDimX, p.gridDimY, p.gridDimZ}, {p.blockDimX, p.blockDimY, p.blockDimZ}, p.sharedMemBytes,
         p.hStream, p.kernelParams, p.extra, pt);
}

void launch_cooperative(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<LaunchPrefix>(cb);
  launch(d, cb, p.f, {p.grid_x, p.grid_y, p.grid_z}, {p.block_x, p.block_y, p.block_z}, p.shared_mem, p.stream,
         p.kernel_params, nullptr, pt);
}

void launch_kernel_ex(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<cuLaunchKernelEx_params>(cb);
  if (!p.config) return;
  const CUlaunchConfig& c = *p.config;
  launch(d, cb, p.f, {c.gridDimX, c.gridDimY, c.gridDimZ}, {c.blockDimX, c.blockDimY, c.blockDimZ},
         c.sharedMemBytes, c.hStream, p.kernelParams, p.extra, pt);
}

void launch_host_func(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  d.rec.host_func_launched(stream_ref(d, params<cuLaunchHostFunc_params>(cb).hStream, cb, pt));
}

void graph_launch(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<cuGraphLaunch_params>(cb);
  d.rec.graph_launched(stream_ref(d, p.hStream, cb, pt), cb.correlationId, u64(p.hGraph));
}

void begin_capture(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  d.rec.capture_began(stream_ref(d, params<StreamFirst>(cb).stream, cb, pt));
}

void begin_capture_to_graph(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<cuStreamBeginCaptureToGraph_params>(cb);
  d.rec.capture_began(stream_ref(d, p.hStream, cb, pt), u64(p.hGraph));
}

void end_capture(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<cuStreamEndCapture_params>(cb);
  const bool ok = result_of(cb) == CUDA_SUCCESS;
  d.rec.capture_ended(stream_ref(d, p.hStream, cb, pt), ok && p.phGraph ? u64(*p.phGraph) : 0);
}

void graph_instantiate(Decoder& d, const CUpti_CallbackData& cb, bool) {
  const auto& p = params<InstantiatePrefix>(cb);
  if (p.exec) d.rec.graph_instantiated(u64(*p.exec), u64(p.graph));
}

// --- copies ------------------------------------------------------------------------------

// Copies whose direction the API name does not give (unified addressing) are classified by
// asking the driver about each side.
MemcpyKind classify(Decoder& d, uint64_t dst, uint64_t src, uint32_t& flags) {
  MemoryKind dk = d.facts.memory_kind(dst), sk = d.facts.memory_kind(src);
  if (dk == MemoryKind::PageableHost || sk == MemoryKind::PageableHost) flags |= trace::kMemPageableHost;
  const bool dh = dk != MemoryKind::Device, sh = sk != MemoryKind::Device;
  if (dh && sh) return MemcpyKind::HostToHost;
  if (sh) return MemcpyKind::HostToDevice;
  if (dh) return MemcpyKind::DeviceToHost;
  return MemcpyKind::DeviceToDevice;
}

// One linear copy call: P its params, Dst/Src the members, Kind its direction (Default: ask
// the driver).
template <class P, auto Dst, auto Src, MemcpyKind Kind>
void linear_copy(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const P& p = params<P>(cb);
  const StreamRef s = call_stream(d, p, cb, pt);
  trace::Memcpy m;
  m.dst = u64(p.*Dst);
  m.src = u64(p.*Src);
  m.width = p.ByteCount;
  m.flags = sync_flag(!kNamesStream<P>);
  m.kind = Kind;
  if constexpr (Kind == MemcpyKind::Default) {
    m.kind = classify(d, m.dst, m.src, m.flags);
  } else if constexpr (Kind == MemcpyKind::HostToDevice) {
    if (d.facts.memory_kind(m.src) == MemoryKind::PageableHost) m.flags |= trace::kMemPageableHost;
  } else if constexpr (Kind == MemcpyKind::DeviceToHost) {
    if (d.facts.memory_kind(m.dst) == MemoryKind::PageableHost) m.flags |= trace::kMemPageableHost;
  }
  d.rec.memcpy_issued(s, cb.correlationId, m);
}

uint64_t side_address(CUmemorytype type, const void* host, CUdeviceptr device) {
  if (type == CU_MEMORYTYPE_HOST) return u64(host);
  if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) return device;
  return 0;  // a CUDA array: no linear address
}

void pitched_copy(Decoder& d, const CUpti_CallbackData& cb, StreamRef s, trace::Memcpy m, bool sync) {
  m.flags = sync_flag(sync);
  m.kind = classify(d, m.dst, m.src, m.flags);
  d.rec.memcpy_issued(s, cb.correlationId, m);
}

trace::Memcpy copy_2d_record(const CUDA_MEMCPY2D& p) {
  trace::Memcpy m;
  m.src = side_address(p.srcMemoryType, p.srcHost, p.srcDevice) + p.srcY * p.srcPitch + p.srcXInBytes;
  m.dst = side_address(p.dstMemoryType, p.dstHost, p.dstDevice) + p.dstY * p.dstPitch + p.dstXInBytes;
  m.width = p.WidthInBytes;
  m.rows = p.Height;
  m.src_pitch = p.srcPitch;
  m.dst_pitch = p.dstPitch;
  return m;
}

// A 3D copy becomes rows of one pitch; when slices are taller than the copied height the
// rows in between are included (a superset of the bytes touched).
trace::Memcpy copy_3d_record(const CUDA_MEMCPY3D& p) {
  trace::Memcpy m;
  const size_t src_slice = p.srcPitch * (p.srcHeight ? p.srcHeight : p.Height);
  const size_t dst_slice = p.dstPitch * (p.dstHeight ? p.dstHeight : p.Height);
  m.src = side_address(p.srcMemoryType, p.srcHost, p.srcDevice) + p.srcZ * src_slice + p.srcY * p.srcPitch +
          p.srcXInBytes;
  m.dst = side_address(p.dstMemoryType, p.dstHost, p.dstDevice) + p.dstZ * dst_slice + p.dstY * p.dstPitch +
          p.dstXInBytes;
  m.width = p.WidthInBytes;
  const size_t depth = p.Depth ? p.Depth : 1;
  const size_t slice_rows = p.dstHeight ? p.dstHeight : p.Height;
  m.rows = (depth - 1) * slice_rows + p.Height;
  m.src_pitch = p.srcPitch;
  m.dst_pitch = p.dstPitch;
  return m;
}

// P's pCopy is a CUDA_MEMCPY2D or CUDA_MEMCPY3D.
template <class P>
void shaped_copy(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const P& p = params<P>(cb);
  if (!p.pCopy) return;
  const StreamRef s = call_stream(d, p, cb, pt);
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*p.pCopy)>, CUDA_MEMCPY2D>) {
    pitched_copy(d, cb, s, copy_2d_record(*p.pCopy), !kNamesStream<P>);
  } else {
    pitched_copy(d, cb, s, copy_3d_record(*p.pCopy), !kNamesStream<P>);
  }
}

// --- memsets -----------------------------------------------------------------------------

// One memset call: Elem bytes per element, Value the member holding the value; 2D calls
// (with dstPitch, Width, Height) set rows.
template <class P, unsigned Elem, auto Value>
void memset_call(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const P& p = params<P>(cb);
  const StreamRef s = call_stream(d, p, cb, pt);
  trace::Memset m;
  m.dst = p.dstDevice;
  m.value = static_cast<uint32_t>(p.*Value);
  m.flags = sync_flag(!kNamesStream<P>);
  if constexpr (requires { p.dstPitch; }) {
    m.width = p.Width * Elem;
    m.rows = p.Height;
    m.pitch = p.dstPitch;
  } else {
    m.width = p.N * Elem;
  }
  d.rec.memset_issued(s, cb.correlationId, m);
}

// --- events, streams, synchronization -----------------------------------------------------

template <class P> void event_record(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const P& p = params<P>(cb);
  d.rec.event_recorded(u64(p.hEvent), stream_ref(d, p.hStream, cb, pt));
}

void stream_wait_event(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<cuStreamWaitEvent_params>(cb);
  d.rec.event_waited(stream_ref(d, p.hStream, cb, pt), u64(p.hEvent));
}

void event_destroy(Decoder& d, const CUpti_CallbackData& cb, bool) {
  d.rec.event_destroyed(u64(params<cuEventDestroy_v2_params>(cb).hEvent));
}

void stream_destroy(Decoder& d, const CUpti_CallbackData& cb, bool) {
  d.rec.stream_destroyed(u64(params<cuStreamDestroy_v2_params>(cb).hStream));
}

uint32_t stream_flags(unsigned int cuda_flags) {
  return (cuda_flags & CU_STREAM_NON_BLOCKING) ? uint32_t{trace::kStreamNonBlocking} : 0u;
}

void stream_create(Decoder& d, const CUpti_CallbackData& cb, bool) {
  const auto& p = params<cuStreamCreate_params>(cb);
  d.rec.stream_created(u64(*p.phStream), device(d, cb), stream_flags(p.Flags), 0);
}

void stream_create_with_priority(Decoder& d, const CUpti_CallbackData& cb, bool) {
  const auto& p = params<cuStreamCreateWithPriority_params>(cb);
  d.rec.stream_created(u64(*p.phStream), device(d, cb), stream_flags(p.flags), p.priority);
}

void event_create(Decoder& d, const CUpti_CallbackData& cb, bool) {
  const auto& p = params<cuEventCreate_params>(cb);
  d.rec.event_created(u64(*p.phEvent), p.Flags);
}

void event_synchronize(Decoder& d, const CUpti_CallbackData& cb, bool) {
  d.rec.event_synchronized(u64(params<cuEventSynchronize_params>(cb).hEvent));
}

// Queries report "not ready" as an error code: that is an outcome, not a failure.
void event_query(Decoder& d, const CUpti_CallbackData& cb, bool) {
  d.rec.event_queried(u64(params<cuEventQuery_params>(cb).hEvent), result_of(cb) == CUDA_SUCCESS);
}

void stream_query(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  d.rec.stream_queried(stream_ref(d, params<cuStreamQuery_params>(cb).hStream, cb, pt), result_of(cb) == CUDA_SUCCESS);
}

void stream_synchronize(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  d.rec.stream_synchronized(stream_ref(d, params<cuStreamSynchronize_params>(cb).hStream, cb, pt));
}

void ctx_synchronize(Decoder& d, const CUpti_CallbackData& cb, bool) { d.rec.device_synchronized(device(d, cb)); }

void ctx_synchronize_v2(Decoder& d, const CUpti_CallbackData& cb, bool) {
  CUcontext ctx = params<cuCtxSynchronize_v2_params>(cb).ctx;
  d.rec.device_synchronized(ctx ? d.facts.device_of_context(ctx) : device(d, cb));
}

// --- memory ------------------------------------------------------------------------------

// One allocation call: P's out-pointer member Ptr, its size member Bytes; stream-ordered
// allocations name their stream.
template <class P, AllocKind Kind, auto Ptr, auto Bytes>
void allocation(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const P& p = params<P>(cb);
  std::optional<StreamRef> stream;
  if constexpr (kNamesStream<P>) stream = stream_ref(d, p.hStream, cb, pt);
  d.rec.allocated(Kind, u64(*(p.*Ptr)), p.*Bytes, device(d, cb), stream);
}

void alloc_pitch(Decoder& d, const CUpti_CallbackData& cb, bool) {
  const auto& p = params<cuMemAllocPitch_v2_params>(cb);
  d.rec.allocated(AllocKind::Device, *p.dptr, *p.pPitch * p.Height, device(d, cb));
}

void mem_map(Decoder& d, const CUpti_CallbackData& cb, bool) {
  const auto& p = params<cuMemMap_params>(cb);
  d.rec.allocated(AllocKind::Vmm, p.ptr, p.size, device(d, cb));
}

// Frees are recorded at entry: before the memory can be handed out again.
template <class P, AllocKind Kind, auto Ptr> void free_call(Decoder& d, const CUpti_CallbackData& cb, bool) {
  d.rec.freed(Kind, u64(params<P>(cb).*Ptr));
}

void free_async(Decoder& d, const CUpti_CallbackData& cb, bool pt) {
  const auto& p = params<cuMemFreeAsync_params>(cb);
  d.rec.freed(AllocKind::Async, p.dptr, stream_ref(d, p.hStream, cb, pt));
}

// --- the table ---------------------------------------------------------------------------

// One call, and one with its per-thread-default-stream variant (_ptsz for calls that take a
// stream, _ptds for synchronous ones): the variant shares the handler and the site. `name` is
// only ever pasted or quoted: cuda.h defines many API names as macros (cuStreamDestroy is
// cuStreamDestroy_v2), and an expanded name would be another call's id.
#define CALL(name, site, ...) \
  DriverCall { CUPTI_DRIVER_TRACE_CBID_##name, #name, CallSite::site, false, __VA_ARGS__ }
#define CALL_PT(name, suffix, site, ...)                                                         \
  DriverCall{CUPTI_DRIVER_TRACE_CBID_##name, #name, CallSite::site, false, __VA_ARGS__},         \
      DriverCall {                                                                               \
    CUPTI_DRIVER_TRACE_CBID_##name##_##suffix, #name "_" #suffix, CallSite::site, true, __VA_ARGS__ \
  }
// Handlers for one params type P.
#define COPY(P, DST, SRC, KIND) linear_copy<P##_params, &P##_params::DST, &P##_params::SRC, MemcpyKind::KIND>
#define MEMSET(P, ELEM, VALUE) memset_call<P##_params, ELEM, &P##_params::VALUE>
#define ALLOC(P, KIND, PTR, BYTES) allocation<P##_params, AllocKind::KIND, &P##_params::PTR, &P##_params::BYTES>

constexpr DriverCall kDriverCalls[] = {
    // Kernel launches and other work on streams.
    CALL_PT(cuLaunchKernel, ptsz, Entry, launch_kernel),
    CALL_PT(cuLaunchCooperativeKernel, ptsz, Entry, launch_cooperative),
    CALL_PT(cuLaunchKernelEx, ptsz, Entry, launch_kernel_ex),
    CALL_PT(cuLaunchHostFunc, ptsz, Entry, launch_host_func),
    CALL_PT(cuGraphLaunch, ptsz, Entry, graph_launch),
    // A capture begins only if the call succeeds; it ends also when the call fails (an
    // invalidated capture ends without a graph).
    CALL_PT(cuStreamBeginCapture, ptsz, Exit, begin_capture),
    CALL_PT(cuStreamBeginCapture_v2, ptsz, Exit, begin_capture),
    CALL_PT(cuStreamBeginCaptureToGraph, ptsz, Exit, begin_capture_to_graph),
    CALL_PT(cuStreamEndCapture, ptsz, ExitAlways, end_capture),
    CALL(cuGraphInstantiate, Exit, graph_instantiate),
    CALL(cuGraphInstantiate_v2, Exit, graph_instantiate),
    CALL(cuGraphInstantiateWithFlags, Exit, graph_instantiate),
    CALL_PT(cuGraphInstantiateWithParams, ptsz, Exit, graph_instantiate),

    // Asynchronous copies.
    CALL_PT(cuMemcpyAsync, ptsz, Entry, COPY(cuMemcpyAsync, dst, src, Default)),
    CALL_PT(cuMemcpyHtoDAsync_v2, ptsz, Entry, COPY(cuMemcpyHtoDAsync_v2, dstDevice, srcHost, HostToDevice)),
    CALL_PT(cuMemcpyDtoHAsync_v2, ptsz, Entry, COPY(cuMemcpyDtoHAsync_v2, dstHost, srcDevice, DeviceToHost)),
    CALL_PT(cuMemcpyDtoDAsync_v2, ptsz, Entry, COPY(cuMemcpyDtoDAsync_v2, dstDevice, srcDevice, DeviceToDevice)),
    CALL_PT(cuMemcpyPeerAsync, ptsz, Entry, COPY(cuMemcpyPeerAsync, dstDevice, srcDevice, Peer)),
    CALL_PT(cuMemcpy2DAsync_v2, ptsz, Entry, shaped_copy<cuMemcpy2DAsync_v2_params>),
    CALL_PT(cuMemcpy3DAsync_v2, ptsz, Entry, shaped_copy<cuMemcpy3DAsync_v2_params>),

    // Synchronous copies: the legacy stream, or the thread's own for _ptds.
    CALL_PT(cuMemcpy, ptds, Entry, COPY(cuMemcpy, dst, src, Default)),
    CALL_PT(cuMemcpyHtoD_v2, ptds, Entry, COPY(cuMemcpyHtoD_v2, dstDevice, srcHost, HostToDevice)),
    CALL_PT(cuMemcpyDtoH_v2, ptds, Entry, COPY(cuMemcpyDtoH_v2, dstHost, srcDevice, DeviceToHost)),
    CALL_PT(cuMemcpyDtoD_v2, ptds, Entry, COPY(cuMemcpyDtoD_v2, dstDevice, srcDevice, DeviceToDevice)),
    CALL_PT(cuMemcpyPeer, ptds, Entry, COPY(cuMemcpyPeer, dstDevice, srcDevice, Peer)),
    CALL_PT(cuMemcpy2D_v2, ptds, Entry, shaped_copy<cuMemcpy2D_v2_params>),
    CALL_PT(cuMemcpy2DUnaligned_v2, ptds, Entry, shaped_copy<cuMemcpy2DUnaligned_v2_params>),
    CALL_PT(cuMemcpy3D_v2, ptds, Entry, shaped_copy<cuMemcpy3D_v2_params>),

    // Memsets.
    CALL_PT(cuMemsetD8_v2, ptds, Entry, MEMSET(cuMemsetD8_v2, 1, uc)),
    CALL_PT(cuMemsetD16_v2, ptds, Entry, MEMSET(cuMemsetD16_v2, 2, us)),
    CALL_PT(cuMemsetD32_v2, ptds, Entry, MEMSET(cuMemsetD32_v2, 4, ui)),
    CALL_PT(cuMemsetD8Async, ptsz, Entry, MEMSET(cuMemsetD8Async, 1, uc)),
    CALL_PT(cuMemsetD16Async, ptsz, Entry, MEMSET(cuMemsetD16Async, 2, us)),
    CALL_PT(cuMemsetD32Async, ptsz, Entry, MEMSET(cuMemsetD32Async, 4, ui)),
    CALL_PT(cuMemsetD2D8_v2, ptds, Entry, MEMSET(cuMemsetD2D8_v2, 1, uc)),
    CALL_PT(cuMemsetD2D16_v2, ptds, Entry, MEMSET(cuMemsetD2D16_v2, 2, us)),
    CALL_PT(cuMemsetD2D32_v2, ptds, Entry, MEMSET(cuMemsetD2D32_v2, 4, ui)),
    CALL_PT(cuMemsetD2D8Async, ptsz, Entry, MEMSET(cuMemsetD2D8Async, 1, uc)),
    CALL_PT(cuMemsetD2D16Async, ptsz, Entry, MEMSET(cuMemsetD2D16Async, 2, us)),
    CALL_PT(cuMemsetD2D32Async, ptsz, Entry, MEMSET(cuMemsetD2D32Async, 4, ui)),

    // Events, streams and synchronization.
    CALL_PT(cuEventRecord, ptsz, Entry, event_record<cuEventRecord_params>),
    CALL_PT(cuEventRecordWithFlags, ptsz, Entry, event_record<cuEventRecordWithFlags_params>),
    CALL_PT(cuStreamWaitEvent, ptsz, Entry, stream_wait_event),
    CALL(cuEventDestroy, Entry, event_destroy),
    CALL(cuEventDestroy_v2, Entry, event_destroy),
    CALL(cuStreamDestroy, Entry, stream_destroy),
    CALL(cuStreamDestroy_v2, Entry, stream_destroy),
    CALL(cuStreamCreate, Exit, stream_create),
    CALL(cuStreamCreateWithPriority, Exit, stream_create_with_priority),
    CALL(cuEventCreate, Exit, event_create),
    CALL(cuEventSynchronize, Exit, event_synchronize),
    CALL(cuEventQuery, ExitOrNotReady, event_query),
    CALL_PT(cuStreamSynchronize, ptsz, Exit, stream_synchronize),
    CALL_PT(cuStreamQuery, ptsz, ExitOrNotReady, stream_query),
    CALL(cuCtxSynchronize, Exit, ctx_synchronize),
    CALL(cuCtxSynchronize_v2, Exit, ctx_synchronize_v2),

    // Memory.
    CALL(cuMemAlloc_v2, Exit, ALLOC(cuMemAlloc_v2, Device, dptr, bytesize)),
    CALL(cuMemAllocPitch_v2, Exit, alloc_pitch),
    CALL(cuMemAllocManaged, Exit, ALLOC(cuMemAllocManaged, Managed, dptr, bytesize)),
    CALL(cuMemAllocHost_v2, Exit, ALLOC(cuMemAllocHost_v2, HostPinned, pp, bytesize)),
    CALL(cuMemHostAlloc, Exit, ALLOC(cuMemHostAlloc, HostPinned, pp, bytesize)),
    CALL(cuMemHostAlloc_v2, Exit, ALLOC(cuMemHostAlloc, HostPinned, pp, bytesize)),
    CALL_PT(cuMemAllocAsync, ptsz, Exit, ALLOC(cuMemAllocAsync, Async, dptr, bytesize)),
    CALL_PT(cuMemAllocFromPoolAsync, ptsz, Exit, ALLOC(cuMemAllocFromPoolAsync, Async, dptr, bytesize)),
    CALL(cuMemMap, Exit, mem_map),
    CALL(cuMemUnmap, Entry, free_call<cuMemUnmap_params, AllocKind::Vmm, &cuMemUnmap_params::ptr>),
    CALL(cuMemFree_v2, Entry, free_call<cuMemFree_v2_params, AllocKind::Device, &cuMemFree_v2_params::dptr>),
    CALL(cuMemFreeHost, Entry, free_call<cuMemFreeHost_params, AllocKind::HostPinned, &cuMemFreeHost_params::p>),
    CALL_PT(cuMemFreeAsync, ptsz, Entry, free_async),
};

#undef ALLOC
#undef MEMSET
#undef COPY
#undef CALL_PT
#undef CALL

// cbid -> table entry, for dispatch in O(1).
using CallIndex = std::array<const DriverCall*, CUPTI_DRIVER_TRACE_CBID_SIZE>;
const CallIndex& call_index() {
  static const CallIndex index = [] {
    CallIndex i{};
    for (const DriverCall& c : kDriverCalls)
      if (c.cbid < i.size()) i[c.cbid] = &c;
    return i;
  }();
  return index;
}

}  // namespace

void kernel_param_bytes(const ParamLayout& layout, void** kernel_params, void** extra, std::string& bytes) {
  bytes.clear();
  if (kernel_params) {
    if (layout.params.empty()) return;
    const auto& last = layout.params.back();
    bytes.resize(last.first + last.second, '\0');
    for (size_t i = 0; i < layout.params.size(); ++i) {
      if (kernel_params[i]) std::memcpy(bytes.data() + layout.params[i].first, kernel_params[i], layout.params[i].second);
    }
    return;
  }
  // The `extra` form: CU_LAUNCH_PARAM_BUFFER_POINTER, ptr, CU_LAUNCH_PARAM_BUFFER_SIZE, &size.
  const void* buffer = nullptr;
  size_t size = 0;
  for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<size_t*>(extra[i + 1]);
  }
  if (buffer) bytes.assign(static_cast<const char*>(buffer), size);
}

std::span<const DriverCall> traced_driver_calls() { return kDriverCalls; }

const DriverCall* find_driver_call(CUpti_CallbackId cbid) {
  const CallIndex& index = call_index();
  return cbid < index.size() ? index[cbid] : nullptr;
}

STREAMHAZ_HOT void decode_driver_call(Decoder& d, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  const DriverCall* call = find_driver_call(cbid);
  if (!call) return;
  if (cb.callbackSite == CUPTI_API_ENTER) {
    if (call->site == CallSite::Entry) call->handler(d, cb, call->per_thread);
    return;
  }
  if (call->site == CallSite::Entry) return;
  const CUresult r = result_of(cb);
  if (r == CUDA_SUCCESS || (r == CUDA_ERROR_NOT_READY && call->site == CallSite::ExitOrNotReady) ||
      call->site == CallSite::ExitAlways)
    call->handler(d, cb, call->per_thread);
}

}  // namespace streamhaz::tracer::glue
