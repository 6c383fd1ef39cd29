// The driver-call decoder without a GPU: real cu*_params structs and CUPTI callback data, as
// the driver hands them over, fixed answers for what the decoder asks the driver, and the
// records that reach the Recorder.
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "driver_decode.h"
#include "record_log.h"

using namespace streamhaz::tracer;
using namespace streamhaz::tracer::glue;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

namespace {

#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

struct FakeFacts : DriverFacts {
  std::map<CUcontext, uint32_t> devices;
  std::map<uint64_t, MemoryKind> kinds;  // default: device memory
  ParamLayout layout;
  bool param_bytes = true;
  int layout_queries = 0;

  uint32_t device_of_context(CUcontext ctx) override { return devices.count(ctx) ? devices[ctx] : 0; }
  MemoryKind memory_kind(uint64_t ptr) override { return kinds.count(ptr) ? kinds[ptr] : MemoryKind::Device; }
  const ParamLayout& param_layout(CUfunction) override {
    ++layout_queries;
    return layout;
  }
  bool wants_param_bytes() override { return param_bytes; }
  int name_queries = 0;
  const char* kernel_name(CUfunction) override {
    ++name_queries;
    return "kernel_named_by_driver";
  }
};

CUcontext context(uintptr_t v) { return reinterpret_cast<CUcontext>(v); }
CUstream stream(uintptr_t v) { return reinterpret_cast<CUstream>(v); }
CUevent event(uintptr_t v) { return reinterpret_cast<CUevent>(v); }

// A decoder over a record log, and calls made the way CUPTI reports them.
struct Harness {
  RecordLog log;
  Recorder rec{log};
  FakeFacts facts;
  // The static tier's recorder, which keeps the bytes the decoder gathers.
  bool keeps_bytes = (rec.set_kernel_arguments(KernelArguments::PointersAndBytes), true);
  Decoder decoder{rec, facts};
  CUresult result = CUDA_SUCCESS;

  const char* symbol = "kernel_a";  // null: a call through the tracer's wrappers, which has none
  template <class P> void call(CUpti_CallbackId cbid, P& params, CUpti_ApiCallbackSite site, uint64_t correlation = 1) {
    CUpti_CallbackData cb{};
    cb.callbackSite = site;
    cb.functionParams = &params;
    cb.functionReturnValue = site == CUPTI_API_EXIT ? &result : nullptr;
    cb.correlationId = static_cast<uint32_t>(correlation);
    cb.context = context(0xc0);
    cb.symbolName = symbol;
    decode_driver_call(decoder, cbid, cb);
  }
  // Entry and exit, as the driver makes them.
  template <class P> void both(CUpti_CallbackId cbid, P& params, uint64_t correlation = 1) {
    call(cbid, params, CUPTI_API_ENTER, correlation);
    call(cbid, params, CUPTI_API_EXIT, correlation);
  }
  StreamCreate stream_of(StreamId id) const {
    for (const StreamCreate& s : log.all<StreamCreate>())
      if (s.stream == id) return s;
    FAIL("no stream " << id);
    return {};
  }
};

}  // namespace

TEST_CASE("decode: the table names each call once, with a handler, and dispatch finds exactly it") {
  std::set<CUpti_CallbackId> seen;
  for (const DriverCall& c : traced_driver_calls()) {
    INFO(c.name);
    CHECK(seen.insert(c.cbid).second);
    CHECK(c.handler != nullptr);
    CHECK(find_driver_call(c.cbid) == &c);
    const std::string_view name = c.name;
    CHECK(c.per_thread == (name.ends_with("_ptsz") || name.ends_with("_ptds")));
  }
  CHECK(seen.size() > 100);
  // Every call outside the table is ignored: nothing is handled that is not enabled.
  size_t dispatched = 0;
  for (CUpti_CallbackId cbid = 0; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const DriverCall* c = find_driver_call(cbid);
    if (!c) continue;
    ++dispatched;
    CHECK(seen.count(cbid));
  }
  CHECK(dispatched == seen.size());
  CHECK(find_driver_call(CBID(cuCtxCreate_v2)) == nullptr);
}

TEST_CASE("decode: a per-thread variant shares its plain call's site and handler") {
  std::map<std::string_view, const DriverCall*> by_name;
  for (const DriverCall& c : traced_driver_calls()) by_name[c.name] = &c;
  for (const DriverCall& c : traced_driver_calls()) {
    if (!c.per_thread) continue;
    const std::string_view name = c.name;
    auto plain = by_name.find(name.substr(0, name.size() - 5));
    INFO(c.name);
    REQUIRE(plain != by_name.end());
    CHECK(plain->second->site == c.site);
    CHECK(plain->second->handler == c.handler);
  }
}

TEST_CASE("decode: cuLaunchKernel at entry becomes a Kernel with its grid, stream and parameter bytes") {
  Harness h;
  h.facts.devices[context(0xc0)] = 3;
  h.facts.layout.params = {{0, 4}, {8, 8}};
  int n = 42;
  uint64_t ptr = 0x7f0000001000;
  void* args[] = {&n, &ptr};
  cuLaunchKernel_params p{reinterpret_cast<CUfunction>(0xf1), 4, 2, 1, 128, 1, 1, 256, stream(0x5000), args, nullptr};
  h.both(CBID(cuLaunchKernel), p, 77);
  auto kernels = h.log.all<Kernel>();
  REQUIRE(kernels.size() == 1);  // the exit adds nothing
  CHECK(kernels[0].grid[0] == 4);
  CHECK(kernels[0].grid[1] == 2);
  CHECK(kernels[0].block[0] == 128);
  CHECK(kernels[0].shared_mem == 256);
  REQUIRE(kernels[0].params.size() == 16);
  CHECK(std::memcmp(kernels[0].params.data(), &n, 4) == 0);
  CHECK(std::memcmp(kernels[0].params.data() + 8, &ptr, 8) == 0);
  const StreamCreate s = h.stream_of(kernels[0].op.stream);
  CHECK(s.handle == 0x5000);
  CHECK(h.log.all<StringDef>().at(0).text == "kernel_a");
}

TEST_CASE("decode: a launch that comes without a name asks the driver, once per function") {
  Harness h;
  h.symbol = nullptr;
  int n = 1;
  void* args[] = {&n};
  cuLaunchKernel_params p{reinterpret_cast<CUfunction>(0xf1), 1, 1, 1, 1, 1, 1, 0, stream(0x5000), args, nullptr};
  for (int i = 0; i < 3; ++i) h.call(CBID(cuLaunchKernel), p, CUPTI_API_ENTER);
  REQUIRE(h.log.count<Kernel>() == 3);
  CHECK(h.facts.name_queries == 1);
  CHECK(h.log.all<StringDef>().at(0).text == "kernel_named_by_driver");
  h.symbol = "kernel_a";
  p.f = reinterpret_cast<CUfunction>(0xf2);
  h.call(CBID(cuLaunchKernel), p, CUPTI_API_ENTER);
  CHECK(h.facts.name_queries == 1);  // CUPTI's name, when it gives one
}

TEST_CASE("decode: the api tier gathers no parameter bytes and asks no layout") {
  Harness h;
  h.facts.param_bytes = false;
  int n = 1;
  void* args[] = {&n};
  cuLaunchKernel_params p{reinterpret_cast<CUfunction>(0xf1), 1, 1, 1, 1, 1, 1, 0, stream(0x5000), args, nullptr};
  h.call(CBID(cuLaunchKernel), p, CUPTI_API_ENTER);
  REQUIRE(h.log.count<Kernel>() == 1);
  CHECK(h.log.all<Kernel>()[0].params.empty());
  CHECK(h.facts.layout_queries == 0);
}

TEST_CASE("decode: parameters passed in an extra buffer are taken as they are") {
  Harness h;
  char buffer[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  cuLaunchKernel_params p{reinterpret_cast<CUfunction>(0xf1), 1, 1, 1, 1, 1, 1, 0, stream(0x5000), nullptr, extra};
  h.call(CBID(cuLaunchKernel), p, CUPTI_API_ENTER);
  REQUIRE(h.log.count<Kernel>() == 1);
  CHECK(h.log.all<Kernel>()[0].params == std::string(buffer, sizeof buffer));
}

TEST_CASE("decode: cuLaunchKernelEx reads its launch config; _ptsz with stream 0 is the thread's stream") {
  Harness h;
  CUlaunchConfig config{};
  config.gridDimX = 7;
  config.blockDimX = 64;
  config.hStream = nullptr;
  cuLaunchKernelEx_params p{&config, reinterpret_cast<CUfunction>(0xf2), nullptr, nullptr};
  h.call(CBID(cuLaunchKernelEx_ptsz), p, CUPTI_API_ENTER);
  REQUIRE(h.log.count<Kernel>() == 1);
  const Kernel k = h.log.all<Kernel>()[0];
  CHECK(k.grid[0] == 7);
  CHECK(k.block[0] == 64);
  CHECK(h.stream_of(k.op.stream).flags == kStreamPerThreadDefault);
}

TEST_CASE("decode: cuMemcpyAsync asks the driver which way a unified copy goes") {
  Harness h;
  h.facts.kinds[0x1000] = MemoryKind::PageableHost;
  cuMemcpyAsync_params p{0x7f0000000000, 0x1000, 4096, stream(0x5000)};
  h.call(CBID(cuMemcpyAsync), p, CUPTI_API_ENTER);
  REQUIRE(h.log.count<Memcpy>() == 1);
  const Memcpy m = h.log.all<Memcpy>()[0];
  CHECK(m.kind == MemcpyKind::HostToDevice);
  CHECK(m.flags == kMemPageableHost);
  CHECK(m.dst == 0x7f0000000000);
  CHECK(m.src == 0x1000);
  CHECK(m.width == 4096);
}

TEST_CASE("decode: a synchronous copy runs on the legacy stream and says it is synchronous") {
  Harness h;
  int host[4] = {};
  cuMemcpyDtoH_v2_params p{host, 0x7f0000000000, sizeof host};
  h.call(CBID(cuMemcpyDtoH_v2), p, CUPTI_API_ENTER);
  REQUIRE(h.log.count<Memcpy>() == 1);
  const Memcpy m = h.log.all<Memcpy>()[0];
  CHECK(m.kind == MemcpyKind::DeviceToHost);
  CHECK(m.flags == kMemSync);  // the host side is device memory to the fake: not pageable
  CHECK(m.dst == reinterpret_cast<uint64_t>(host));
  CHECK(h.stream_of(m.op.stream).flags == kStreamLegacyDefault);
}

TEST_CASE("decode: 2D and 3D copies become pitched rows") {
  Harness h;
  CUDA_MEMCPY2D c2{};
  c2.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c2.srcDevice = 0x10000;
  c2.srcXInBytes = 16;
  c2.srcY = 2;
  c2.srcPitch = 1024;
  c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c2.dstDevice = 0x20000;
  c2.dstPitch = 512;
  c2.WidthInBytes = 256;
  c2.Height = 8;
  cuMemcpy2DAsync_v2_params p2{&c2, stream(0x5000)};
  h.call(CBID(cuMemcpy2DAsync_v2), p2, CUPTI_API_ENTER);

  CUDA_MEMCPY3D c3{};
  c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c3.srcDevice = 0x30000;
  c3.srcPitch = 256;
  c3.srcHeight = 16;
  c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c3.dstDevice = 0x40000;
  c3.dstPitch = 256;
  c3.dstHeight = 16;
  c3.dstZ = 1;
  c3.WidthInBytes = 128;
  c3.Height = 4;
  c3.Depth = 3;
  cuMemcpy3D_v2_params p3{&c3};
  h.call(CBID(cuMemcpy3D_v2_ptds), p3, CUPTI_API_ENTER);

  auto copies = h.log.all<Memcpy>();
  REQUIRE(copies.size() == 2);
  CHECK(copies[0].src == 0x10000 + 2 * 1024 + 16);
  CHECK(copies[0].dst == 0x20000);
  CHECK(copies[0].rows == 8);
  CHECK(copies[0].src_pitch == 1024);
  CHECK(copies[0].dst_pitch == 512);
  CHECK(copies[0].kind == MemcpyKind::DeviceToDevice);
  CHECK(copies[1].dst == 0x40000 + 256 * 16);  // one slice down
  CHECK(copies[1].rows == 2 * 16 + 4);         // two whole slices, then the copied height
  CHECK(copies[1].flags == kMemSync);
  CHECK(h.stream_of(copies[1].op.stream).flags == kStreamPerThreadDefault);
}

TEST_CASE("decode: memsets give width in bytes, rows and pitch") {
  Harness h;
  cuMemsetD32Async_params p1{0x7f0000000000, 0xdeadbeef, 100, stream(0x5000)};
  h.call(CBID(cuMemsetD32Async), p1, CUPTI_API_ENTER);
  cuMemsetD2D16_v2_params p2{0x7f0000100000, 4096, 0xabcd, 300, 5};
  h.call(CBID(cuMemsetD2D16_v2_ptds), p2, CUPTI_API_ENTER);
  auto sets = h.log.all<Memset>();
  REQUIRE(sets.size() == 2);
  CHECK(sets[0].width == 400);
  CHECK(sets[0].value == 0xdeadbeef);
  CHECK(sets[0].flags == 0);
  CHECK(sets[1].width == 600);
  CHECK(sets[1].rows == 5);
  CHECK(sets[1].pitch == 4096);
  CHECK(sets[1].flags == kMemSync);
  CHECK(h.stream_of(sets[1].op.stream).flags == kStreamPerThreadDefault);
}

TEST_CASE("decode: an event recorded on one stream and waited on by another") {
  Harness h;
  CUevent ev = event(0xe1);
  cuEventCreate_params create{&ev, 0x2};
  h.both(CBID(cuEventCreate), create);
  cuEventRecord_params record{ev, stream(0x5000)};
  h.both(CBID(cuEventRecord), record);
  cuStreamWaitEvent_params wait{stream(0x6000), ev, 0};
  h.both(CBID(cuStreamWaitEvent), wait);
  REQUIRE(h.log.count<EventCreate>() == 1);
  CHECK(h.log.all<EventCreate>()[0].flags == 0x2);
  REQUIRE(h.log.count<EventRecord>() == 1);
  REQUIRE(h.log.count<EventWait>() == 1);
  const EventRecord r = h.log.all<EventRecord>()[0];
  const EventWait w = h.log.all<EventWait>()[0];
  CHECK(r.event == w.event);
  CHECK(h.stream_of(r.stream).handle == 0x5000);
  CHECK(h.stream_of(w.stream).handle == 0x6000);
}

TEST_CASE("decode: creates and allocations are recorded at exit, with the context's device") {
  Harness h;
  h.facts.devices[context(0xc0)] = 5;
  CUstream s = stream(0x7000);
  cuStreamCreate_params create{&s, CU_STREAM_NON_BLOCKING};
  h.call(CBID(cuStreamCreate), create, CUPTI_API_ENTER);
  CHECK(h.log.count<StreamCreate>() == 0);  // the handle exists only after the call
  h.call(CBID(cuStreamCreate), create, CUPTI_API_EXIT);
  REQUIRE(h.log.count<StreamCreate>() == 1);
  CHECK(h.log.all<StreamCreate>()[0].device == 5);
  CHECK(h.log.all<StreamCreate>()[0].flags == kStreamNonBlocking);

  CUdeviceptr dptr = 0x7f0000200000;
  cuMemAlloc_v2_params alloc{&dptr, 1 << 20};
  h.both(CBID(cuMemAlloc_v2), alloc);
  cuMemFree_v2_params release{dptr};
  h.both(CBID(cuMemFree_v2), release);
  REQUIRE(h.log.count<Alloc>() == 1);
  CHECK(h.log.all<Alloc>()[0].ptr == dptr);
  CHECK(h.log.all<Alloc>()[0].bytes == 1 << 20);
  CHECK(h.log.all<Alloc>()[0].device == 5);
  REQUIRE(h.log.count<Free>() == 1);
  CHECK(h.log.all<Free>()[0].ptr == dptr);
}

TEST_CASE("decode: a failed call records nothing at exit; a query's NOT_READY is an outcome") {
  Harness h;
  CUdeviceptr dptr = 0x7f0000200000;
  cuMemAlloc_v2_params alloc{&dptr, 64};
  h.result = CUDA_ERROR_OUT_OF_MEMORY;
  h.call(CBID(cuMemAlloc_v2), alloc, CUPTI_API_EXIT);
  CHECK(h.log.count<Alloc>() == 0);

  cuEventQuery_params query{event(0xe1)};
  h.call(CBID(cuEventQuery), query, CUPTI_API_EXIT);
  CHECK(h.log.count<EventQuery>() == 0);  // out of memory: no outcome
  h.result = CUDA_ERROR_NOT_READY;
  h.call(CBID(cuEventQuery), query, CUPTI_API_EXIT);
  h.call(CBID(cuMemAlloc_v2), alloc, CUPTI_API_EXIT);
  CHECK(h.log.count<Alloc>() == 0);  // NOT_READY is a failure for anything but a query
  cuStreamQuery_params squery{stream(0x5000)};
  h.call(CBID(cuStreamQuery_ptsz), squery, CUPTI_API_EXIT);
  h.result = CUDA_SUCCESS;
  h.call(CBID(cuEventQuery), query, CUPTI_API_EXIT);
  auto queries = h.log.all<EventQuery>();
  REQUIRE(queries.size() == 2);
  CHECK_FALSE(queries[0].complete);
  CHECK(queries[1].complete);
  REQUIRE(h.log.count<StreamQuery>() == 1);
  CHECK_FALSE(h.log.all<StreamQuery>()[0].complete);
}

TEST_CASE("decode: a graph instantiated at exit is the one its launch names") {
  Harness h;
  CUgraph graph = reinterpret_cast<CUgraph>(0x96);
  cuStreamBeginCapture_v2_params begin{stream(0x5000), CU_STREAM_CAPTURE_MODE_GLOBAL};
  h.both(CBID(cuStreamBeginCapture_v2), begin);
  cuStreamEndCapture_params end{stream(0x5000), &graph};
  h.both(CBID(cuStreamEndCapture), end);
  CUgraphExec exec = reinterpret_cast<CUgraphExec>(0xe7);
  cuGraphInstantiateWithFlags_params inst{&exec, reinterpret_cast<CUgraph>(0x96), 0};
  h.both(CBID(cuGraphInstantiateWithFlags), inst);
  cuGraphLaunch_params launch{exec, stream(0x5000)};
  h.both(CBID(cuGraphLaunch), launch);
  REQUIRE(h.log.count<GraphLaunch>() == 1);
  CHECK(h.log.all<GraphLaunch>()[0].graph == h.log.all<CaptureEnd>()[0].graph);
  CHECK(h.log.all<GraphLaunch>()[0].graph != 0);
}

TEST_CASE("decode: a failed capture begin records nothing, a failed end still ends the capture") {
  Harness h;
  cuStreamBeginCapture_v2_params begin{stream(0x5000), CU_STREAM_CAPTURE_MODE_GLOBAL};
  h.result = CUDA_ERROR_ILLEGAL_STATE;
  h.both(CBID(cuStreamBeginCapture_v2), begin);
  CHECK(h.log.count<CaptureBegin>() == 0);
  h.result = CUDA_SUCCESS;
  h.both(CBID(cuStreamBeginCapture_v2), begin);
  CUgraph none = nullptr;
  cuStreamEndCapture_params end{stream(0x5000), &none};
  h.result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  h.both(CBID(cuStreamEndCapture), end);
  REQUIRE(h.log.count<CaptureEnd>() == 1);
  CHECK(h.log.all<CaptureEnd>()[0].graph == 0);
}

TEST_CASE("decode: a call outside the table records nothing") {
  Harness h;
  cuCtxCreate_v2_params p{};
  h.both(CBID(cuCtxCreate_v2), p);
  CHECK(h.log.records.empty());
}
