// Writes an 8-rank job for the MPI check's tests: ZeRO-2-like gradient buckets whose copy into
// the IPG buffer is not ordered after the previous all-reduce on ranks 1-7 (races), a tensor-
// parallel pair communicator, and a last all-reduce rank 7 never reaches (a partial collective).
// With `repeated`, rank 5 also issues the first all-reduce's sequence number again after every
// rank completed it (irregular input the sharded check must stop on).
//
//   make_mpi_traces DIR [repeated]
#include <string>

#include "streamhaz/testing/trace_builder.h"

using namespace streamhaz::trace;

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "repeated")) return 2;
  const bool repeated = argc == 3;
  constexpr int kWorld = 8;
  TraceBuilder run(kWorld);
  for (int i = 0; i < kWorld; ++i) {
    RankTraceBuilder& r = run.rank(i);
    StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream"),
             tp = r.stream("tensor-parallel stream");
    uint64_t ipg = r.alloc(4096, "ipg_buffer"), grad = r.alloc(4096, "grad"), act = r.alloc(4096, "activation");
    EventId ready = r.event(), done = r.event(), tp_done = r.event();
    for (int step = 0; step < 4; ++step) {
      r.kernel(compute, "backward", {writes(grad, 4096), reads(act, 4096)});
      if (i == 0) r.wait(compute, done);
      r.memcpy(compute, ipg, grad, 4096);
      r.record(ready, compute);
      r.wait(reduction, ready);
      r.wait(tp, ready);
      r.nccl_in_group(tp, NcclKind::AllGather, act, act, 256, TraceBuilder::comm(1 + i / 2), i % 2, 2);
      r.record(tp_done, tp);
      r.wait(compute, tp_done);
      if (step < 3 || i != kWorld - 1) r.all_reduce(reduction, ipg, ipg, 1024, TraceBuilder::comm(0));
      if (repeated && i == 5 && step == 2) {
        Nccl again;
        again.op.seq = 900000;
        again.op.stream = reduction;
        again.kind = NcclKind::AllReduce;
        again.sendbuf = again.recvbuf = ipg;
        again.count = 1024;
        again.elem_bytes = 4;
        again.comm = TraceBuilder::comm(0);
        again.rank = static_cast<uint32_t>(i);
        again.nranks = kWorld;
        again.comm_seq = 0;
        r.add(again);
      }
      r.record(done, reduction);
    }
  }
  run.write_dir(argv[1]);
  return 0;
}
