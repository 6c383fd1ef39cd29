#include "nccl_interpose.h"

#include <dlfcn.h>
#include <nccl.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cuda_facts.h"
#include "stack_capture.h"
#include "tracer_state.h"

namespace streamhaz::tracer::glue {
namespace {

void* find_real(const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn) return fn;
  // NCCL in a local symbol scope: reach the copy the program already loaded, never load one.
  void* lib = dlopen("libnccl.so.2", RTLD_NOLOAD | RTLD_LAZY);
  if (!lib) return nullptr;
  std::string profiled = std::string("p") + name;  // NCCL's own alias of every API call
  fn = dlsym(lib, profiled.c_str());
  return fn ? fn : dlsym(lib, name);
}

template <class Fn> Fn real(const char* name, std::atomic<void*>& cache) {
  void* fn = cache.load(std::memory_order_acquire);
  if (!fn) {
    fn = find_real(name);
    if (fn) cache.store(fn, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(fn);
}

ncclResult_t missing(const char* name) {
  warn(std::string("cannot find the real ") + name + " behind the tracer's");
  return ncclSystemError;
}

uint8_t element_bytes(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 1;
  }
}

// Facts about communicators the tracer saw created.
std::mutex comm_mu;
std::unordered_map<uint64_t, uint64_t> comm_hash;   // comm -> hash
std::unordered_map<uint64_t, uint64_t> split_count; // parent comm -> splits made from it
uint64_t init_all_count = 0;

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

using CommRankFn = ncclResult_t (*)(const ncclComm_t, int*);
std::atomic<void*> real_user_rank, real_count, real_cu_device, real_get_version;

std::optional<CommInfo> describe(ncclComm_t comm, uint64_t hash) {
  auto user_rank = real<CommRankFn>("ncclCommUserRank", real_user_rank);
  auto count = real<CommRankFn>("ncclCommCount", real_count);
  int rank = 0, n = 1;
  if (!user_rank || !count || user_rank(comm, &rank) != ncclSuccess || count(comm, &n) != ncclSuccess)
    return std::nullopt;
  return CommInfo{hash, static_cast<uint32_t>(rank), static_cast<uint32_t>(n)};
}

void comm_created(ncclComm_t comm, uint64_t hash) {
  if (!comm) return;
  {
    std::lock_guard lock(comm_mu);
    comm_hash[reinterpret_cast<uint64_t>(comm)] = hash;
  }
  Recorder* rec = active_recorder();
  if (!rec) return;
  if (auto info = describe(comm, hash)) rec->nccl_comm_initialized(reinterpret_cast<uint64_t>(comm), *info);
}

uint32_t device_of_comm(ncclComm_t comm) {
  auto cu_device = real<CommRankFn>("ncclCommCuDevice", real_cu_device);
  int device = 0;
  if (cu_device && cu_device(comm, &device) == ncclSuccess) return static_cast<uint32_t>(device);
  return current_device();
}

void note_nccl_version() {
  static std::once_flag once;
  std::call_once(once, [] {
    using VersionFn = ncclResult_t (*)(int*);
    auto get = real<VersionFn>("ncclGetVersion", real_get_version);
    int v = 0;
    Recorder* rec = active_recorder();
    if (!get || get(&v) != ncclSuccess || !rec) return;
    std::string text = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
    rec->meta("{\"nccl_version\":\"" + text + "\"}");
  });
}

// Brackets one collective or point-to-point call: the kernels launched inside belong to it.
class CallScope {
 public:
  CallScope(trace::NcclKind kind, const void* send, const void* recv, size_t count, ncclDataType_t type,
            int redop, int peer, ncclComm_t comm, cudaStream_t stream)
      : rec_(active_recorder()) {
    if (!rec_) return;
    note_nccl_version();
    NcclCall c;
    c.kind = kind;
    c.sendbuf = reinterpret_cast<uint64_t>(send);
    c.recvbuf = reinterpret_cast<uint64_t>(recv);
    c.count = count;
    c.dtype = static_cast<uint8_t>(type);
    c.elem_bytes = element_bytes(type);
    c.redop = static_cast<uint8_t>(redop);
    c.peer = peer;
    c.comm = reinterpret_cast<uint64_t>(comm);
    c.stream = StreamRef{reinterpret_cast<uint64_t>(stream), device_of_comm(comm), false};
    StackScope scope(StackNeed::Operation);
    rec_->nccl_call_begin(c);
  }
  ~CallScope() {
    if (rec_) rec_->nccl_call_end();
  }

 private:
  Recorder* rec_;
};

}  // namespace

std::optional<CommInfo> query_comm(uint64_t comm) {
  uint64_t hash = 0;
  {
    std::lock_guard lock(comm_mu);
    auto it = comm_hash.find(comm);
    if (it != comm_hash.end()) hash = it->second;
  }
  return describe(reinterpret_cast<ncclComm_t>(comm), hash);
}

}  // namespace streamhaz::tracer::glue

using namespace streamhaz::tracer::glue;
using streamhaz::trace::NcclKind;

#define NCCL_EXPORT extern "C" __attribute__((visibility("default")))
#define REAL(NAME)                                                   \
  static std::atomic<void*> cache_##NAME;                            \
  auto real_##NAME = real<decltype(&::NAME)>(#NAME, cache_##NAME);   \
  if (!real_##NAME) return missing(#NAME)

NCCL_EXPORT ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclAllReduce);
  CallScope scope(NcclKind::AllReduce, send, recv, count, type, op, -1, comm, stream);
  return real_ncclAllReduce(send, recv, count, type, op, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclBroadcast);
  CallScope scope(NcclKind::Broadcast, send, recv, count, type, 0, root, comm, stream);
  return real_ncclBroadcast(send, recv, count, type, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                   cudaStream_t stream) {
  REAL(ncclBcast);
  CallScope scope(NcclKind::Broadcast, buff, buff, count, type, 0, root, comm, stream);
  return real_ncclBcast(buff, count, type, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                    int root, ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclReduce);
  CallScope scope(NcclKind::Reduce, send, recv, count, type, op, root, comm, stream);
  return real_ncclReduce(send, recv, count, type, op, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type,
                                       ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclAllGather);
  CallScope scope(NcclKind::AllGather, send, recv, count, type, 0, -1, comm, stream);
  return real_ncclAllGather(send, recv, count, type, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t type,
                                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclReduceScatter);
  CallScope scope(NcclKind::ReduceScatter, send, recv, count, type, op, -1, comm, stream);
  return real_ncclReduceScatter(send, recv, count, type, op, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type,
                                      ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclAlltoAll);
  CallScope scope(NcclKind::AllToAll, send, recv, count, type, 0, -1, comm, stream);
  return real_ncclAlltoAll(send, recv, count, type, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                    ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclGather);
  CallScope scope(NcclKind::Gather, send, recv, count, type, 0, root, comm, stream);
  return real_ncclGather(send, recv, count, type, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
  REAL(ncclScatter);
  CallScope scope(NcclKind::Scatter, send, recv, count, type, 0, root, comm, stream);
  return real_ncclScatter(send, recv, count, type, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                  cudaStream_t stream) {
  REAL(ncclSend);
  CallScope scope(NcclKind::Send, send, nullptr, count, type, 0, peer, comm, stream);
  return real_ncclSend(send, count, type, peer, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                  cudaStream_t stream) {
  REAL(ncclRecv);
  CallScope scope(NcclKind::Recv, nullptr, recv, count, type, 0, peer, comm, stream);
  return real_ncclRecv(recv, count, type, peer, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclGroupStart() {
  REAL(ncclGroupStart);
  if (auto* rec = active_recorder()) rec->nccl_group_start();
  return real_ncclGroupStart();
}

NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  REAL(ncclGroupEnd);
  auto* rec = active_recorder();
  if (rec) {
    StackScope scope(streamhaz::tracer::StackNeed::Operation);  // grouped calls are recorded now
    rec->nccl_group_end_begin();
  }
  ncclResult_t r = real_ncclGroupEnd();
  if (rec) rec->nccl_group_end_end();
  return r;
}

// --- communicators: a hash every rank computes alike, from what every rank passes

NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  REAL(ncclCommInitRank);
  ncclResult_t r = real_ncclCommInitRank(comm, nranks, id, rank);
  if (r == ncclSuccess && comm) comm_created(*comm, fnv1a(&id, sizeof id));
  return r;
}

NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                                ncclConfig_t* config) {
  REAL(ncclCommInitRankConfig);
  ncclResult_t r = real_ncclCommInitRankConfig(comm, nranks, id, rank, config);
  if ((r == ncclSuccess || r == ncclInProgress) && comm) comm_created(*comm, fnv1a(&id, sizeof id));
  return r;
}

NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int n_ids,
                                                  ncclUniqueId* ids, ncclConfig_t* config) {
  REAL(ncclCommInitRankScalable);
  ncclResult_t r = real_ncclCommInitRankScalable(comm, nranks, rank, n_ids, ids, config);
  if ((r == ncclSuccess || r == ncclInProgress) && comm && ids && n_ids > 0)
    comm_created(*comm, fnv1a(ids, sizeof(ncclUniqueId) * static_cast<size_t>(n_ids)));
  return r;
}

NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  REAL(ncclCommInitAll);
  ncclResult_t r = real_ncclCommInitAll(comms, ndev, devlist);
  if (r == ncclSuccess && comms) {
    uint64_t n;
    {
      std::lock_guard lock(comm_mu);
      n = ++init_all_count;
    }
    // One process holds every rank: any hash shared by the ranks will do.
    uint64_t hash = fnv1a(&n, sizeof n, fnv1a("ncclCommInitAll", 15));
    for (int i = 0; i < ndev; ++i) comm_created(comms[i], hash);
  }
  return r;
}

NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                       ncclConfig_t* config) {
  REAL(ncclCommSplit);
  // Every rank of the parent calls split collectively, in the same order.
  uint64_t parent_hash = 0, nth = 0;
  {
    std::lock_guard lock(comm_mu);
    parent_hash = comm_hash[reinterpret_cast<uint64_t>(comm)];
    nth = split_count[reinterpret_cast<uint64_t>(comm)]++;
  }
  ncclResult_t r = real_ncclCommSplit(comm, color, key, newcomm, config);
  if ((r == ncclSuccess || r == ncclInProgress) && newcomm && *newcomm) {
    uint64_t parts[3] = {parent_hash, nth, static_cast<uint64_t>(static_cast<int64_t>(color))};
    comm_created(*newcomm, fnv1a(parts, sizeof parts));
  }
  return r;
}

NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  REAL(ncclCommDestroy);
  if (auto* rec = active_recorder()) rec->nccl_comm_destroyed(reinterpret_cast<uint64_t>(comm));
  return real_ncclCommDestroy(comm);
}

NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  REAL(ncclCommAbort);
  if (auto* rec = active_recorder()) rec->nccl_comm_destroyed(reinterpret_cast<uint64_t>(comm));
  return real_ncclCommAbort(comm);
}
