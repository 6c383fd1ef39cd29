#include "driver_decode.h"


#include "cuda_facts.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {

using trace::AllocKind;
using trace::MemcpyKind;

namespace {

#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

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

StreamRef stream_ref(CUstream s, const CUpti_CallbackData& cb, bool per_thread) {
  return StreamRef{u64(s), device_of_context(cb.context), per_thread};
}

StreamRef legacy_or_ptds(const CUpti_CallbackData& cb, bool per_thread) { return stream_ref(nullptr, cb, per_thread); }

bool succeeded(const CUpti_CallbackData& cb) {
  return cb.functionReturnValue && *static_cast<const CUresult*>(cb.functionReturnValue) == CUDA_SUCCESS;
}

// A C string, measured by the recorder only for a function it has not named yet.
const char* kernel_name(const CUpti_CallbackData& cb) { return cb.symbolName ? cb.symbolName : "?"; }

void launch(Recorder& rec, const CUpti_CallbackData& cb, CUfunction f, const unsigned (&grid)[3],
            const unsigned (&block)[3], unsigned smem, CUstream s, void** params, void** extra, bool ptsz) {
  KernelLaunch k;
  k.function = u64(f);
  k.name = kernel_name(cb);
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = grid[i];
    k.block[i] = block[i];
  }
  k.shared_mem = smem;
  if (state().footprints != Footprints::Api) {
    // Reused per thread: the recorder copies the bytes into its own reused record.
    thread_local std::string bytes;
    kernel_param_bytes(f, params, extra, bytes);
    k.params = bytes;
  }
  rec.kernel_launched(stream_ref(s, cb, ptsz), cb.correlationId, k);
}

// Copies whose direction the API name does not give (unified addressing) are classified by
// asking the driver about each side.
MemcpyKind classify(uint64_t dst, uint64_t src, uint32_t& flags) {
  MemoryKind d = memory_kind(dst), s = memory_kind(src);
  if (d == MemoryKind::PageableHost || s == MemoryKind::PageableHost) flags |= trace::kMemPageableHost;
  const bool dh = d != MemoryKind::Device, sh = s != MemoryKind::Device;
  if (dh && sh) return MemcpyKind::HostToHost;
  if (sh) return MemcpyKind::HostToDevice;
  if (dh) return MemcpyKind::DeviceToHost;
  return MemcpyKind::DeviceToDevice;
}

void linear_copy(Recorder& rec, const CUpti_CallbackData& cb, StreamRef s, uint64_t dst, uint64_t src,
                 size_t bytes, MemcpyKind kind, bool sync) {
  trace::Memcpy m;
  m.dst = dst;
  m.src = src;
  m.width = bytes;
  m.flags = sync ? uint32_t{trace::kMemSync} : 0u;
  if (kind == MemcpyKind::Default) {
    kind = classify(dst, src, m.flags);
  } else if (kind == MemcpyKind::HostToDevice && memory_kind(src) == MemoryKind::PageableHost) {
    m.flags |= trace::kMemPageableHost;
  } else if (kind == MemcpyKind::DeviceToHost && memory_kind(dst) == MemoryKind::PageableHost) {
    m.flags |= trace::kMemPageableHost;
  }
  m.kind = kind;
  rec.memcpy_issued(s, cb.correlationId, m);
}

uint64_t side_address(CUmemorytype type, const void* host, CUdeviceptr device) {
  if (type == CU_MEMORYTYPE_HOST) return u64(host);
  if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) return device;
  return 0;  // a CUDA array: no linear address
}

void copy_2d(Recorder& rec, const CUpti_CallbackData& cb, StreamRef s, const CUDA_MEMCPY2D* p, bool sync) {
  if (!p) return;
  trace::Memcpy m;
  m.src = side_address(p->srcMemoryType, p->srcHost, p->srcDevice) + p->srcY * p->srcPitch + p->srcXInBytes;
  m.dst = side_address(p->dstMemoryType, p->dstHost, p->dstDevice) + p->dstY * p->dstPitch + p->dstXInBytes;
  m.width = p->WidthInBytes;
  m.rows = p->Height;
  m.src_pitch = p->srcPitch;
  m.dst_pitch = p->dstPitch;
  m.flags = sync ? uint32_t{trace::kMemSync} : 0u;
  m.kind = classify(m.dst, m.src, m.flags);
  rec.memcpy_issued(s, cb.correlationId, m);
}

// A 3D copy becomes rows of one pitch; when slices are taller than the copied height the
// rows in between are included (a superset of the bytes touched).
void copy_3d(Recorder& rec, const CUpti_CallbackData& cb, StreamRef s, const CUDA_MEMCPY3D* p, bool sync) {
  if (!p) return;
  trace::Memcpy m;
  const size_t src_slice = p->srcPitch * (p->srcHeight ? p->srcHeight : p->Height);
  const size_t dst_slice = p->dstPitch * (p->dstHeight ? p->dstHeight : p->Height);
  m.src = side_address(p->srcMemoryType, p->srcHost, p->srcDevice) + p->srcZ * src_slice + p->srcY * p->srcPitch +
          p->srcXInBytes;
  m.dst = side_address(p->dstMemoryType, p->dstHost, p->dstDevice) + p->dstZ * dst_slice + p->dstY * p->dstPitch +
          p->dstXInBytes;
  m.width = p->WidthInBytes;
  const size_t depth = p->Depth ? p->Depth : 1;
  const size_t slice_rows = p->dstHeight ? p->dstHeight : p->Height;
  m.rows = (depth - 1) * slice_rows + p->Height;
  m.src_pitch = p->srcPitch;
  m.dst_pitch = p->dstPitch;
  m.flags = sync ? uint32_t{trace::kMemSync} : 0u;
  m.kind = classify(m.dst, m.src, m.flags);
  rec.memcpy_issued(s, cb.correlationId, m);
}

void memset_1d(Recorder& rec, const CUpti_CallbackData& cb, StreamRef s, CUdeviceptr dst, size_t n,
               unsigned elem, uint32_t value, bool sync) {
  trace::Memset m;
  m.dst = dst;
  m.width = n * elem;
  m.value = value;
  m.flags = sync ? uint32_t{trace::kMemSync} : 0u;
  rec.memset_issued(s, cb.correlationId, m);
}

void memset_2d(Recorder& rec, const CUpti_CallbackData& cb, StreamRef s, CUdeviceptr dst, size_t pitch,
               size_t width, size_t height, unsigned elem, uint32_t value, bool sync) {
  trace::Memset m;
  m.dst = dst;
  m.width = width * elem;
  m.rows = height;
  m.pitch = pitch;
  m.value = value;
  m.flags = sync ? uint32_t{trace::kMemSync} : 0u;
  rec.memset_issued(s, cb.correlationId, m);
}

template <class P> const P& params(const CUpti_CallbackData& cb) { return *static_cast<const P*>(cb.functionParams); }

void on_entry(Recorder& rec, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  switch (cbid) {
    // --- kernel launches
    case CBID(cuLaunchKernel):
    case CBID(cuLaunchKernel_ptsz):
    case CBID(cuLaunchCooperativeKernel):
    case CBID(cuLaunchCooperativeKernel_ptsz): {
      const auto& p = params<LaunchPrefix>(cb);
      const bool ptsz = cbid == CBID(cuLaunchKernel_ptsz) || cbid == CBID(cuLaunchCooperativeKernel_ptsz);
      void** extra = (cbid == CBID(cuLaunchKernel) || cbid == CBID(cuLaunchKernel_ptsz))
                         ? params<cuLaunchKernel_params>(cb).extra
                         : nullptr;
      launch(rec, cb, p.f, {p.grid_x, p.grid_y, p.grid_z}, {p.block_x, p.block_y, p.block_z}, p.shared_mem, p.stream,
             p.kernel_params, extra, ptsz);
      break;
    }
    case CBID(cuLaunchKernelEx):
    case CBID(cuLaunchKernelEx_ptsz): {
      const auto& p = params<cuLaunchKernelEx_params>(cb);
      if (!p.config) break;
      const CUlaunchConfig& c = *p.config;
      launch(rec, cb, p.f, {c.gridDimX, c.gridDimY, c.gridDimZ}, {c.blockDimX, c.blockDimY, c.blockDimZ},
             c.sharedMemBytes, c.hStream, p.kernelParams, p.extra, cbid == CBID(cuLaunchKernelEx_ptsz));
      break;
    }
    case CBID(cuLaunchHostFunc):
    case CBID(cuLaunchHostFunc_ptsz):
      rec.host_func_launched(stream_ref(params<cuLaunchHostFunc_params>(cb).hStream, cb,
                                        cbid == CBID(cuLaunchHostFunc_ptsz)));
      break;
    case CBID(cuGraphLaunch):
    case CBID(cuGraphLaunch_ptsz): {
      const auto& p = params<cuGraphLaunch_params>(cb);
      rec.graph_launched(stream_ref(p.hStream, cb, cbid == CBID(cuGraphLaunch_ptsz)), cb.correlationId, u64(p.hGraph));
      break;
    }
    case CBID(cuStreamBeginCapture):
    case CBID(cuStreamBeginCapture_ptsz):
    case CBID(cuStreamBeginCapture_v2):
    case CBID(cuStreamBeginCapture_v2_ptsz):
    case CBID(cuStreamBeginCaptureToGraph):
    case CBID(cuStreamBeginCaptureToGraph_ptsz): {
      const bool ptsz = cbid == CBID(cuStreamBeginCapture_ptsz) || cbid == CBID(cuStreamBeginCapture_v2_ptsz) ||
                        cbid == CBID(cuStreamBeginCaptureToGraph_ptsz);
      rec.capture_began(stream_ref(params<StreamFirst>(cb).stream, cb, ptsz));
      break;
    }

    // --- asynchronous copies
    case CBID(cuMemcpyAsync):
    case CBID(cuMemcpyAsync_ptsz): {
      const auto& p = params<cuMemcpyAsync_params>(cb);
      linear_copy(rec, cb, stream_ref(p.hStream, cb, cbid == CBID(cuMemcpyAsync_ptsz)), p.dst, p.src, p.ByteCount,
                  MemcpyKind::Default, false);
      break;
    }
    case CBID(cuMemcpyHtoDAsync_v2):
    case CBID(cuMemcpyHtoDAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyHtoDAsync_v2_params>(cb);
      linear_copy(rec, cb, stream_ref(p.hStream, cb, cbid == CBID(cuMemcpyHtoDAsync_v2_ptsz)), p.dstDevice,
                  u64(p.srcHost), p.ByteCount, MemcpyKind::HostToDevice, false);
      break;
    }
    case CBID(cuMemcpyDtoHAsync_v2):
    case CBID(cuMemcpyDtoHAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyDtoHAsync_v2_params>(cb);
      linear_copy(rec, cb, stream_ref(p.hStream, cb, cbid == CBID(cuMemcpyDtoHAsync_v2_ptsz)), u64(p.dstHost),
                  p.srcDevice, p.ByteCount, MemcpyKind::DeviceToHost, false);
      break;
    }
    case CBID(cuMemcpyDtoDAsync_v2):
    case CBID(cuMemcpyDtoDAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyDtoDAsync_v2_params>(cb);
      linear_copy(rec, cb, stream_ref(p.hStream, cb, cbid == CBID(cuMemcpyDtoDAsync_v2_ptsz)), p.dstDevice,
                  p.srcDevice, p.ByteCount, MemcpyKind::DeviceToDevice, false);
      break;
    }
    case CBID(cuMemcpyPeerAsync):
    case CBID(cuMemcpyPeerAsync_ptsz): {
      const auto& p = params<cuMemcpyPeerAsync_params>(cb);
      linear_copy(rec, cb, stream_ref(p.hStream, cb, cbid == CBID(cuMemcpyPeerAsync_ptsz)), p.dstDevice, p.srcDevice,
                  p.ByteCount, MemcpyKind::Peer, false);
      break;
    }
    case CBID(cuMemcpy2DAsync_v2):
    case CBID(cuMemcpy2DAsync_v2_ptsz): {
      const auto& p = params<cuMemcpy2DAsync_v2_params>(cb);
      copy_2d(rec, cb, stream_ref(p.hStream, cb, cbid == CBID(cuMemcpy2DAsync_v2_ptsz)), p.pCopy, false);
      break;
    }
    case CBID(cuMemcpy3DAsync_v2):
    case CBID(cuMemcpy3DAsync_v2_ptsz): {
      const auto& p = params<cuMemcpy3DAsync_v2_params>(cb);
      copy_3d(rec, cb, stream_ref(p.hStream, cb, cbid == CBID(cuMemcpy3DAsync_v2_ptsz)), p.pCopy, false);
      break;
    }

    // --- synchronous copies: the legacy stream, or the thread's own for _ptds
    case CBID(cuMemcpy):
    case CBID(cuMemcpy_ptds): {
      const auto& p = params<cuMemcpy_params>(cb);
      linear_copy(rec, cb, legacy_or_ptds(cb, cbid == CBID(cuMemcpy_ptds)), p.dst, p.src, p.ByteCount,
                  MemcpyKind::Default, true);
      break;
    }
    case CBID(cuMemcpyHtoD_v2):
    case CBID(cuMemcpyHtoD_v2_ptds): {
      const auto& p = params<cuMemcpyHtoD_v2_params>(cb);
      linear_copy(rec, cb, legacy_or_ptds(cb, cbid == CBID(cuMemcpyHtoD_v2_ptds)), p.dstDevice, u64(p.srcHost),
                  p.ByteCount, MemcpyKind::HostToDevice, true);
      break;
    }
    case CBID(cuMemcpyDtoH_v2):
    case CBID(cuMemcpyDtoH_v2_ptds): {
      const auto& p = params<cuMemcpyDtoH_v2_params>(cb);
      linear_copy(rec, cb, legacy_or_ptds(cb, cbid == CBID(cuMemcpyDtoH_v2_ptds)), u64(p.dstHost), p.srcDevice,
                  p.ByteCount, MemcpyKind::DeviceToHost, true);
      break;
    }
    case CBID(cuMemcpyDtoD_v2):
    case CBID(cuMemcpyDtoD_v2_ptds): {
      const auto& p = params<cuMemcpyDtoD_v2_params>(cb);
      linear_copy(rec, cb, legacy_or_ptds(cb, cbid == CBID(cuMemcpyDtoD_v2_ptds)), p.dstDevice, p.srcDevice,
                  p.ByteCount, MemcpyKind::DeviceToDevice, true);
      break;
    }
    case CBID(cuMemcpyPeer):
    case CBID(cuMemcpyPeer_ptds): {
      const auto& p = params<cuMemcpyPeer_params>(cb);
      linear_copy(rec, cb, legacy_or_ptds(cb, cbid == CBID(cuMemcpyPeer_ptds)), p.dstDevice, p.srcDevice,
                  p.ByteCount, MemcpyKind::Peer, true);
      break;
    }
    case CBID(cuMemcpy2D_v2):
    case CBID(cuMemcpy2D_v2_ptds):
    case CBID(cuMemcpy2DUnaligned_v2):
    case CBID(cuMemcpy2DUnaligned_v2_ptds): {
      const bool ptds = cbid == CBID(cuMemcpy2D_v2_ptds) || cbid == CBID(cuMemcpy2DUnaligned_v2_ptds);
      copy_2d(rec, cb, legacy_or_ptds(cb, ptds), params<cuMemcpy2D_v2_params>(cb).pCopy, true);
      break;
    }
    case CBID(cuMemcpy3D_v2):
    case CBID(cuMemcpy3D_v2_ptds):
      copy_3d(rec, cb, legacy_or_ptds(cb, cbid == CBID(cuMemcpy3D_v2_ptds)), params<cuMemcpy3D_v2_params>(cb).pCopy,
              true);
      break;

    // --- memsets
#define MEMSET_1D(NAME, ELEM, FIELD, SYNC, STREAM)                                       \
  case CBID(NAME): {                                                                     \
    const auto& p = params<NAME##_params>(cb);                                           \
    memset_1d(rec, cb, STREAM, p.dstDevice, p.N, ELEM, static_cast<uint32_t>(p.FIELD), SYNC); \
    break;                                                                               \
  }
#define MEMSET_2D(NAME, ELEM, FIELD, SYNC, STREAM)                                                       \
  case CBID(NAME): {                                                                                     \
    const auto& p = params<NAME##_params>(cb);                                                           \
    memset_2d(rec, cb, STREAM, p.dstDevice, p.dstPitch, p.Width, p.Height, ELEM, static_cast<uint32_t>(p.FIELD), \
              SYNC);                                                                                     \
    break;                                                                                               \
  }
      MEMSET_1D(cuMemsetD8_v2, 1, uc, true, legacy_or_ptds(cb, false))
      MEMSET_1D(cuMemsetD16_v2, 2, us, true, legacy_or_ptds(cb, false))
      MEMSET_1D(cuMemsetD32_v2, 4, ui, true, legacy_or_ptds(cb, false))
      MEMSET_1D(cuMemsetD8_v2_ptds, 1, uc, true, legacy_or_ptds(cb, true))
      MEMSET_1D(cuMemsetD16_v2_ptds, 2, us, true, legacy_or_ptds(cb, true))
      MEMSET_1D(cuMemsetD32_v2_ptds, 4, ui, true, legacy_or_ptds(cb, true))
      MEMSET_1D(cuMemsetD8Async, 1, uc, false, stream_ref(p.hStream, cb, false))
      MEMSET_1D(cuMemsetD16Async, 2, us, false, stream_ref(p.hStream, cb, false))
      MEMSET_1D(cuMemsetD32Async, 4, ui, false, stream_ref(p.hStream, cb, false))
      MEMSET_1D(cuMemsetD8Async_ptsz, 1, uc, false, stream_ref(p.hStream, cb, true))
      MEMSET_1D(cuMemsetD16Async_ptsz, 2, us, false, stream_ref(p.hStream, cb, true))
      MEMSET_1D(cuMemsetD32Async_ptsz, 4, ui, false, stream_ref(p.hStream, cb, true))
      MEMSET_2D(cuMemsetD2D8_v2, 1, uc, true, legacy_or_ptds(cb, false))
      MEMSET_2D(cuMemsetD2D16_v2, 2, us, true, legacy_or_ptds(cb, false))
      MEMSET_2D(cuMemsetD2D32_v2, 4, ui, true, legacy_or_ptds(cb, false))
      MEMSET_2D(cuMemsetD2D8_v2_ptds, 1, uc, true, legacy_or_ptds(cb, true))
      MEMSET_2D(cuMemsetD2D16_v2_ptds, 2, us, true, legacy_or_ptds(cb, true))
      MEMSET_2D(cuMemsetD2D32_v2_ptds, 4, ui, true, legacy_or_ptds(cb, true))
      MEMSET_2D(cuMemsetD2D8Async, 1, uc, false, stream_ref(p.hStream, cb, false))
      MEMSET_2D(cuMemsetD2D16Async, 2, us, false, stream_ref(p.hStream, cb, false))
      MEMSET_2D(cuMemsetD2D32Async, 4, ui, false, stream_ref(p.hStream, cb, false))
      MEMSET_2D(cuMemsetD2D8Async_ptsz, 1, uc, false, stream_ref(p.hStream, cb, true))
      MEMSET_2D(cuMemsetD2D16Async_ptsz, 2, us, false, stream_ref(p.hStream, cb, true))
      MEMSET_2D(cuMemsetD2D32Async_ptsz, 4, ui, false, stream_ref(p.hStream, cb, true))
#undef MEMSET_1D
#undef MEMSET_2D

    // --- events and stream order
    case CBID(cuEventRecord):
    case CBID(cuEventRecord_ptsz): {
      const auto& p = params<cuEventRecord_params>(cb);
      rec.event_recorded(u64(p.hEvent), stream_ref(p.hStream, cb, cbid == CBID(cuEventRecord_ptsz)));
      break;
    }
    case CBID(cuEventRecordWithFlags):
    case CBID(cuEventRecordWithFlags_ptsz): {
      const auto& p = params<cuEventRecordWithFlags_params>(cb);
      rec.event_recorded(u64(p.hEvent), stream_ref(p.hStream, cb, cbid == CBID(cuEventRecordWithFlags_ptsz)));
      break;
    }
    case CBID(cuStreamWaitEvent):
    case CBID(cuStreamWaitEvent_ptsz): {
      const auto& p = params<cuStreamWaitEvent_params>(cb);
      rec.event_waited(stream_ref(p.hStream, cb, cbid == CBID(cuStreamWaitEvent_ptsz)), u64(p.hEvent));
      break;
    }
    case CBID(cuEventDestroy):
    case CBID(cuEventDestroy_v2):
      rec.event_destroyed(u64(params<cuEventDestroy_v2_params>(cb).hEvent));
      break;
    case CBID(cuStreamDestroy):
    case CBID(cuStreamDestroy_v2):
      rec.stream_destroyed(u64(params<cuStreamDestroy_v2_params>(cb).hStream));
      break;

    // --- frees: before the memory can be handed out again
    case CBID(cuMemFree_v2):
      rec.freed(AllocKind::Device, params<cuMemFree_v2_params>(cb).dptr);
      break;
    case CBID(cuMemFreeHost):
      rec.freed(AllocKind::HostPinned, u64(params<cuMemFreeHost_params>(cb).p));
      break;
    case CBID(cuMemFreeAsync):
    case CBID(cuMemFreeAsync_ptsz): {
      const auto& p = params<cuMemFreeAsync_params>(cb);
      rec.freed(AllocKind::Async, p.dptr, stream_ref(p.hStream, cb, cbid == CBID(cuMemFreeAsync_ptsz)));
      break;
    }
    case CBID(cuMemUnmap):
      rec.freed(AllocKind::Vmm, params<cuMemUnmap_params>(cb).ptr);
      break;
    default:
      break;
  }
}

void on_exit(Recorder& rec, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  if (!succeeded(cb)) {
    // Queries report "not ready" as an error code: that is an outcome, not a failure.
    const CUresult r = cb.functionReturnValue ? *static_cast<const CUresult*>(cb.functionReturnValue) : CUDA_SUCCESS;
    if (r != CUDA_ERROR_NOT_READY) return;
    if (cbid == CBID(cuEventQuery)) rec.event_queried(u64(params<cuEventQuery_params>(cb).hEvent), false);
    if (cbid == CBID(cuStreamQuery) || cbid == CBID(cuStreamQuery_ptsz))
      rec.stream_queried(stream_ref(params<cuStreamQuery_params>(cb).hStream, cb, cbid == CBID(cuStreamQuery_ptsz)),
                         false);
    return;
  }
  // Only creates and allocations need the device; launches and copies pass through here too.
  const auto device = [&cb] { return device_of_context(cb.context); };
  switch (cbid) {
    case CBID(cuStreamCreate): {
      const auto& p = params<cuStreamCreate_params>(cb);
      const uint32_t flags = (p.Flags & CU_STREAM_NON_BLOCKING) ? uint32_t{trace::kStreamNonBlocking} : 0u;
      rec.stream_created(u64(*p.phStream), device(), flags, 0);
      break;
    }
    case CBID(cuStreamCreateWithPriority): {
      const auto& p = params<cuStreamCreateWithPriority_params>(cb);
      const uint32_t flags = (p.flags & CU_STREAM_NON_BLOCKING) ? uint32_t{trace::kStreamNonBlocking} : 0u;
      rec.stream_created(u64(*p.phStream), device(), flags, p.priority);
      break;
    }
    case CBID(cuEventCreate): {
      const auto& p = params<cuEventCreate_params>(cb);
      rec.event_created(u64(*p.phEvent), p.Flags);
      break;
    }
    case CBID(cuEventSynchronize):
      rec.event_synchronized(u64(params<cuEventSynchronize_params>(cb).hEvent));
      break;
    case CBID(cuEventQuery):
      rec.event_queried(u64(params<cuEventQuery_params>(cb).hEvent), true);
      break;
    case CBID(cuStreamSynchronize):
    case CBID(cuStreamSynchronize_ptsz):
      rec.stream_synchronized(
          stream_ref(params<cuStreamSynchronize_params>(cb).hStream, cb, cbid == CBID(cuStreamSynchronize_ptsz)));
      break;
    case CBID(cuStreamQuery):
    case CBID(cuStreamQuery_ptsz):
      rec.stream_queried(stream_ref(params<cuStreamQuery_params>(cb).hStream, cb, cbid == CBID(cuStreamQuery_ptsz)),
                         true);
      break;
    case CBID(cuCtxSynchronize):
      rec.device_synchronized(device());
      break;
    case CBID(cuCtxSynchronize_v2): {
      CUcontext ctx = params<cuCtxSynchronize_v2_params>(cb).ctx;
      rec.device_synchronized(ctx ? device_of_context(ctx) : device());
      break;
    }
    case CBID(cuStreamEndCapture):
    case CBID(cuStreamEndCapture_ptsz): {
      const auto& p = params<cuStreamEndCapture_params>(cb);
      rec.capture_ended(stream_ref(p.hStream, cb, cbid == CBID(cuStreamEndCapture_ptsz)), p.phGraph ? u64(*p.phGraph) : 0);
      break;
    }
    case CBID(cuGraphInstantiate):
    case CBID(cuGraphInstantiate_v2):
    case CBID(cuGraphInstantiateWithFlags):
    case CBID(cuGraphInstantiateWithParams):
    case CBID(cuGraphInstantiateWithParams_ptsz): {
      const auto& p = params<InstantiatePrefix>(cb);
      if (p.exec) rec.graph_instantiated(u64(*p.exec), u64(p.graph));
      break;
    }
    case CBID(cuMemAlloc_v2): {
      const auto& p = params<cuMemAlloc_v2_params>(cb);
      rec.allocated(AllocKind::Device, *p.dptr, p.bytesize, device());
      break;
    }
    case CBID(cuMemAllocPitch_v2): {
      const auto& p = params<cuMemAllocPitch_v2_params>(cb);
      rec.allocated(AllocKind::Device, *p.dptr, *p.pPitch * p.Height, device());
      break;
    }
    case CBID(cuMemAllocManaged): {
      const auto& p = params<cuMemAllocManaged_params>(cb);
      rec.allocated(AllocKind::Managed, *p.dptr, p.bytesize, device());
      break;
    }
    case CBID(cuMemAllocHost_v2): {
      const auto& p = params<cuMemAllocHost_v2_params>(cb);
      rec.allocated(AllocKind::HostPinned, u64(*p.pp), p.bytesize, device());
      break;
    }
    case CBID(cuMemHostAlloc):
    case CBID(cuMemHostAlloc_v2): {
      const auto& p = params<cuMemHostAlloc_params>(cb);
      rec.allocated(AllocKind::HostPinned, u64(*p.pp), p.bytesize, device());
      break;
    }
    case CBID(cuMemAllocAsync):
    case CBID(cuMemAllocAsync_ptsz): {
      const auto& p = params<cuMemAllocAsync_params>(cb);
      rec.allocated(AllocKind::Async, *p.dptr, p.bytesize, device(),
                    stream_ref(p.hStream, cb, cbid == CBID(cuMemAllocAsync_ptsz)));
      break;
    }
    case CBID(cuMemAllocFromPoolAsync):
    case CBID(cuMemAllocFromPoolAsync_ptsz): {
      const auto& p = params<cuMemAllocFromPoolAsync_params>(cb);
      rec.allocated(AllocKind::Async, *p.dptr, p.bytesize, device(),
                    stream_ref(p.hStream, cb, cbid == CBID(cuMemAllocFromPoolAsync_ptsz)));
      break;
    }
    case CBID(cuMemMap): {
      const auto& p = params<cuMemMap_params>(cb);
      rec.allocated(AllocKind::Vmm, p.ptr, p.size, device());
      break;
    }
    default:
      break;
  }
}

}  // namespace

const std::vector<CUpti_CallbackId>& traced_driver_calls() {
  static const std::vector<CUpti_CallbackId> calls = {
      CBID(cuLaunchKernel), CBID(cuLaunchKernel_ptsz), CBID(cuLaunchCooperativeKernel),
      CBID(cuLaunchCooperativeKernel_ptsz), CBID(cuLaunchKernelEx), CBID(cuLaunchKernelEx_ptsz),
      CBID(cuLaunchHostFunc), CBID(cuLaunchHostFunc_ptsz), CBID(cuGraphLaunch), CBID(cuGraphLaunch_ptsz),
      CBID(cuStreamBeginCapture), CBID(cuStreamBeginCapture_ptsz), CBID(cuStreamBeginCapture_v2),
      CBID(cuStreamBeginCapture_v2_ptsz), CBID(cuStreamBeginCaptureToGraph), CBID(cuStreamBeginCaptureToGraph_ptsz),
      CBID(cuStreamEndCapture), CBID(cuStreamEndCapture_ptsz), CBID(cuGraphInstantiate), CBID(cuGraphInstantiate_v2),
      CBID(cuGraphInstantiateWithFlags), CBID(cuGraphInstantiateWithParams), CBID(cuGraphInstantiateWithParams_ptsz),
      CBID(cuMemcpyAsync), CBID(cuMemcpyAsync_ptsz), CBID(cuMemcpyHtoDAsync_v2), CBID(cuMemcpyHtoDAsync_v2_ptsz),
      CBID(cuMemcpyDtoHAsync_v2), CBID(cuMemcpyDtoHAsync_v2_ptsz), CBID(cuMemcpyDtoDAsync_v2),
      CBID(cuMemcpyDtoDAsync_v2_ptsz), CBID(cuMemcpyPeerAsync), CBID(cuMemcpyPeerAsync_ptsz), CBID(cuMemcpy2DAsync_v2),
      CBID(cuMemcpy2DAsync_v2_ptsz), CBID(cuMemcpy3DAsync_v2), CBID(cuMemcpy3DAsync_v2_ptsz), CBID(cuMemcpy),
      CBID(cuMemcpy_ptds), CBID(cuMemcpyHtoD_v2), CBID(cuMemcpyHtoD_v2_ptds), CBID(cuMemcpyDtoH_v2),
      CBID(cuMemcpyDtoH_v2_ptds), CBID(cuMemcpyDtoD_v2), CBID(cuMemcpyDtoD_v2_ptds), CBID(cuMemcpyPeer),
      CBID(cuMemcpyPeer_ptds), CBID(cuMemcpy2D_v2), CBID(cuMemcpy2D_v2_ptds), CBID(cuMemcpy2DUnaligned_v2),
      CBID(cuMemcpy2DUnaligned_v2_ptds), CBID(cuMemcpy3D_v2), CBID(cuMemcpy3D_v2_ptds), CBID(cuMemsetD8_v2),
      CBID(cuMemsetD16_v2), CBID(cuMemsetD32_v2), CBID(cuMemsetD8_v2_ptds), CBID(cuMemsetD16_v2_ptds),
      CBID(cuMemsetD32_v2_ptds), CBID(cuMemsetD8Async), CBID(cuMemsetD16Async), CBID(cuMemsetD32Async),
      CBID(cuMemsetD8Async_ptsz), CBID(cuMemsetD16Async_ptsz), CBID(cuMemsetD32Async_ptsz), CBID(cuMemsetD2D8_v2),
      CBID(cuMemsetD2D16_v2), CBID(cuMemsetD2D32_v2), CBID(cuMemsetD2D8_v2_ptds), CBID(cuMemsetD2D16_v2_ptds),
      CBID(cuMemsetD2D32_v2_ptds), CBID(cuMemsetD2D8Async), CBID(cuMemsetD2D16Async), CBID(cuMemsetD2D32Async),
      CBID(cuMemsetD2D8Async_ptsz), CBID(cuMemsetD2D16Async_ptsz), CBID(cuMemsetD2D32Async_ptsz),
      CBID(cuEventRecord), CBID(cuEventRecord_ptsz), CBID(cuEventRecordWithFlags), CBID(cuEventRecordWithFlags_ptsz),
      CBID(cuStreamWaitEvent), CBID(cuStreamWaitEvent_ptsz), CBID(cuEventDestroy), CBID(cuEventDestroy_v2),
      CBID(cuStreamDestroy), CBID(cuStreamDestroy_v2), CBID(cuEventCreate), CBID(cuEventSynchronize),
      CBID(cuEventQuery), CBID(cuStreamCreate), CBID(cuStreamCreateWithPriority), CBID(cuStreamSynchronize),
      CBID(cuStreamSynchronize_ptsz), CBID(cuStreamQuery), CBID(cuStreamQuery_ptsz), CBID(cuCtxSynchronize),
      CBID(cuCtxSynchronize_v2), CBID(cuMemAlloc_v2), CBID(cuMemAllocPitch_v2), CBID(cuMemAllocManaged),
      CBID(cuMemAllocHost_v2), CBID(cuMemHostAlloc), CBID(cuMemHostAlloc_v2), CBID(cuMemAllocAsync),
      CBID(cuMemAllocAsync_ptsz), CBID(cuMemAllocFromPoolAsync), CBID(cuMemAllocFromPoolAsync_ptsz), CBID(cuMemMap),
      CBID(cuMemUnmap), CBID(cuMemFree_v2), CBID(cuMemFreeHost), CBID(cuMemFreeAsync), CBID(cuMemFreeAsync_ptsz),
  };
  return calls;
}

void decode_driver_call(Recorder& rec, CUpti_CallbackId cbid, const CUpti_CallbackData& cb) {
  if (cb.callbackSite == CUPTI_API_ENTER) {
    on_entry(rec, cbid, cb);
  } else {
    on_exit(rec, cbid, cb);
  }
}

}  // namespace streamhaz::tracer::glue
