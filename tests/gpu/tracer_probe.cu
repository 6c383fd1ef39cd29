// A CUDA + NCCL program whose stream operations are known exactly, for the tracer's GPU test:
// it issues a fixed mix of launches, copies, sets, events, syncs, allocations, a captured
// graph, NVTX ranges and (with WORLD_SIZE=2) NCCL calls, then writes what it issued as JSON
// for tests/gpu/check_trace.py to compare with the trace.
//
//   tracer_probe EXPECT.json                              one process, GPU 0
//   RANK=r WORLD_SIZE=2 tracer_probe EXPECT.json IDFILE    one process per GPU, with NCCL
#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "../../include/streamhaz/annotate.h"

#define CHECK_CUDA(x)                                                                      \
  do {                                                                                     \
    cudaError_t e = (x);                                                                   \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "probe: %s failed: %s\n", #x, cudaGetErrorString(e));           \
      std::exit(3);                                                                        \
    }                                                                                      \
  } while (0)
#define CHECK_NCCL(x)                                                                      \
  do {                                                                                     \
    ncclResult_t r = (x);                                                                  \
    if (r != ncclSuccess) {                                                                \
      std::fprintf(stderr, "probe: %s failed: %s\n", #x, ncclGetErrorString(r));           \
      std::exit(3);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void fill(float* p, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

void CUDART_CB host_fn(void*) {}

// The JSON we write: hand-built, small.
struct Expect {
  std::string ops;  // comma-separated objects
  void add(const std::string& obj) { ops += (ops.empty() ? "" : ",\n  ") + obj; }
};

std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%llu", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return b;
}

std::string copy(const char* stream, const void* dst, const void* src, size_t width, size_t rows, const char* kind) {
  return std::string("{\"op\":\"memcpy\",\"stream\":\"") + stream + "\",\"dst\":" + hex(dst) + ",\"src\":" + hex(src) +
         ",\"width\":" + std::to_string(width) + ",\"rows\":" + std::to_string(rows) + ",\"kind\":\"" + kind + "\"}";
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tracer_probe EXPECT.json [NCCL_ID_FILE]\n");
    return 2;
  }
  const int rank = std::getenv("RANK") ? std::atoi(std::getenv("RANK")) : 0;
  const int world = std::getenv("WORLD_SIZE") ? std::atoi(std::getenv("WORLD_SIZE")) : 1;
  const bool with_nccl = world > 1 && argc > 2;
  CHECK_CUDA(cudaSetDevice(rank));
  Expect ex;

  nvtxRangePushA("probe");
  cudaStream_t s1, s2;
  CHECK_CUDA(cudaStreamCreateWithPriority(&s1, cudaStreamNonBlocking, -1));
  CHECK_CUDA(cudaStreamCreate(&s2));
  nvtxNameCudaStreamA(s1, "side stream");
  streamhaz_name_stream(s2, "main stream");

  const size_t mib = 1 << 20;
  float *a, *b;
  void* pinned;
  CHECK_CUDA(cudaMalloc(&a, mib));
  CHECK_CUDA(cudaMalloc(&b, mib));
  CHECK_CUDA(cudaMallocHost(&pinned, mib));
  std::vector<char> pageable(4096, 1);
  streamhaz_name_buffer(a, mib, "buffer a");
  cudaEvent_t e1;
  CHECK_CUDA(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));

  ncclComm_t comm = nullptr;
  if (with_nccl) {
    ncclUniqueId id;
    const std::string path = argv[2];
    if (rank == 0) {
      CHECK_NCCL(ncclGetUniqueId(&id));
      std::ofstream(path + ".tmp", std::ios::binary).write(reinterpret_cast<char*>(&id), sizeof id);
      std::rename((path + ".tmp").c_str(), path.c_str());
    } else {
      for (int i = 0; i < 6000 && access(path.c_str(), R_OK) != 0; ++i) usleep(10000);
      std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(&id), sizeof id);
    }
    CHECK_NCCL(ncclCommInitRank(&comm, world, id, rank));
  }

  // Side stream: 3 kernels, a set, a copy, a host function, an event record.
  nvtxRangePushA("side");
  const int n = static_cast<int>(mib / sizeof(float));
  for (int i = 0; i < 3; ++i) fill<<<n / 256, 256, 0, s1>>>(a, n, 1.0f);
  ex.add("{\"op\":\"kernel\",\"stream\":\"s1\",\"count\":3,\"nvtx\":\"probe/side\"}");
  CHECK_CUDA(cudaMemsetAsync(b, 0, 4096, s1));
  ex.add("{\"op\":\"memset\",\"stream\":\"s1\",\"dst\":" + hex(b) + ",\"width\":4096}");
  CHECK_CUDA(cudaMemcpyAsync(reinterpret_cast<char*>(b) + 4096, a, 8192, cudaMemcpyDeviceToDevice, s1));
  ex.add(copy("s1", reinterpret_cast<char*>(b) + 4096, a, 8192, 1, "DtoD"));
  CHECK_CUDA(cudaLaunchHostFunc(s1, host_fn, nullptr));
  ex.add("{\"op\":\"hostfunc\",\"stream\":\"s1\",\"count\":1}");
  CHECK_CUDA(cudaEventRecord(e1, s1));
  ex.add("{\"op\":\"record\",\"stream\":\"s1\",\"count\":1}");
  nvtxRangePop();

  // Main stream: waits for the side stream, 2 kernels, 2 copies.
  CHECK_CUDA(cudaStreamWaitEvent(s2, e1, 0));
  ex.add("{\"op\":\"wait\",\"stream\":\"s2\",\"count\":1,\"on\":\"s1\"}");
  for (int i = 0; i < 2; ++i) fill<<<n / 256, 256, 0, s2>>>(b, n, 2.0f);
  CHECK_CUDA(cudaMemcpyAsync(pinned, b, 65536, cudaMemcpyDeviceToHost, s2));
  ex.add(copy("s2", pinned, b, 65536, 1, "DtoH"));
  CHECK_CUDA(cudaMemcpy2DAsync(a, 1024, b, 2048, 512, 4, cudaMemcpyDeviceToDevice, s2));
  ex.add(copy("s2", a, b, 512, 4, "DtoD"));

  // Host synchronisation.
  CHECK_CUDA(cudaEventSynchronize(e1));
  CHECK_CUDA(cudaEventQuery(e1));
  CHECK_CUDA(cudaStreamSynchronize(s2));
  (void)cudaStreamQuery(s1);
  ex.add("{\"op\":\"eventsync\",\"count\":1}");
  ex.add("{\"op\":\"eventquery\",\"count\":1,\"complete\":1}");
  ex.add("{\"op\":\"streamsync\",\"stream\":\"s2\",\"count\":2}");  // here and after the graph
  ex.add("{\"op\":\"streamquery\",\"stream\":\"s1\",\"count\":1}");

  // Legacy default stream: pageable synchronous copy, synchronous set, one kernel.
  CHECK_CUDA(cudaMemcpy(a, pageable.data(), 4096, cudaMemcpyHostToDevice));
  ex.add(copy("legacy", a, pageable.data(), 4096, 1, "HtoD"));
  CHECK_CUDA(cudaMemset(a, 1, 256));
  ex.add("{\"op\":\"memset\",\"stream\":\"legacy\",\"dst\":" + hex(a) + ",\"width\":256}");
  fill<<<1, 32>>>(a, 32, 3.0f);
  CHECK_CUDA(cudaDeviceSynchronize());
  ex.add("{\"op\":\"devicesync\",\"count\":1}");
  // Per-thread default stream.
  fill<<<1, 32, 0, cudaStreamPerThread>>>(a, 32, 4.0f);
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread));

  // Stream-ordered allocation.
  void* c = nullptr;
  CHECK_CUDA(cudaMallocAsync(&c, 4096, s1));
  CHECK_CUDA(cudaFreeAsync(c, s1));
  ex.add("{\"op\":\"alloc_async\",\"stream\":\"s1\",\"ptr\":" + hex(c) + ",\"bytes\":4096}");

  // A captured graph of two kernels on the main stream, launched twice.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal));
  fill<<<1, 32, 0, s2>>>(a, 32, 5.0f);
  fill<<<1, 32, 0, s2>>>(b, 32, 6.0f);
  CHECK_CUDA(cudaStreamEndCapture(s2, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphLaunch(exec, s2));
  CHECK_CUDA(cudaGraphLaunch(exec, s2));
  CHECK_CUDA(cudaStreamSynchronize(s2));
  ex.add("{\"op\":\"kernel\",\"stream\":\"s2\",\"count\":4}");  // 2 plain + 2 captured
  ex.add("{\"op\":\"graph\",\"stream\":\"s2\",\"count\":2}");

  if (with_nccl) {
    // One plain all-reduce, a group of two collectives, a send/recv pair.
    const size_t count = 1024;
    CHECK_NCCL(ncclAllReduce(a, a, count, ncclFloat, ncclSum, comm, s1));
    ex.add("{\"op\":\"nccl\",\"stream\":\"s1\",\"kind\":\"ncclAllReduce\",\"send\":" + hex(a) + ",\"recv\":" + hex(a) +
           ",\"count\":1024,\"comm_seq\":0}");
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclAllReduce(b, b, 256, ncclFloat, ncclSum, comm, s1));
    CHECK_NCCL(ncclAllGather(a, b, 128, ncclFloat, comm, s1));
    CHECK_NCCL(ncclGroupEnd());
    ex.add("{\"op\":\"nccl\",\"stream\":\"s1\",\"kind\":\"ncclAllReduce\",\"send\":" + hex(b) + ",\"recv\":" + hex(b) +
           ",\"count\":256,\"comm_seq\":1}");
    ex.add("{\"op\":\"nccl\",\"stream\":\"s1\",\"kind\":\"ncclAllGather\",\"send\":" + hex(a) + ",\"recv\":" + hex(b) +
           ",\"count\":128,\"comm_seq\":2}");
    CHECK_NCCL(ncclGroupStart());
    if (rank == 0) {
      CHECK_NCCL(ncclSend(a, 64, ncclFloat, 1, comm, s1));
      ex.add("{\"op\":\"nccl\",\"stream\":\"s1\",\"kind\":\"ncclSend\",\"send\":" + hex(a) + ",\"recv\":0,\"count\":64,\"comm_seq\":3}");
    } else {
      CHECK_NCCL(ncclRecv(b, 64, ncclFloat, 0, comm, s1));
      ex.add("{\"op\":\"nccl\",\"stream\":\"s1\",\"kind\":\"ncclRecv\",\"send\":0,\"recv\":" + hex(b) + ",\"count\":64,\"comm_seq\":3}");
    }
    CHECK_NCCL(ncclGroupEnd());
    CHECK_CUDA(cudaStreamSynchronize(s1));
  }

  CHECK_CUDA(cudaFree(b));
  ex.add("{\"op\":\"free\",\"ptr\":" + hex(b) + "}");
  nvtxRangePop();
  std::ofstream out(argv[1]);
  out << "{\"rank\":" << rank << ",\"world\":" << world << ",\"nccl\":" << (with_nccl ? 1 : 0) << ",\"s1\":" << hex(s1)
      << ",\"s2\":" << hex(s2) << ",\"ops\":[\n  " << ex.ops << "\n]}\n";
  if (comm) ncclCommDestroy(comm);
  std::printf("probe: rank %d done\n", rank);
  return 0;
}
