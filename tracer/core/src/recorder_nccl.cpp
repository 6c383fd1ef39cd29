// Recorder, NCCL: communicators, calls and groups, and the kernels NCCL launches inside them.
#include "streamhaz/tracer/recorder.h"

#include <algorithm>
#include <utility>

namespace streamhaz::tracer {

using namespace streamhaz::trace;

void Recorder::nccl_comm_initialized(uint64_t comm, CommInfo info) {
  TimedLock lock(mu_);
  comms_[comm] = CommState{info, 0};
}

void Recorder::nccl_comm_destroyed(uint64_t comm) {
  TimedLock lock(mu_);
  comms_.erase(comm);
}

Recorder::CommState& Recorder::comm_state(uint64_t comm) {
  auto it = comms_.find(comm);
  if (it != comms_.end()) return it->second;
  CommInfo info;
  if (comm_query_) {
    if (auto q = comm_query_(comm)) info = *q;
  }
  // Init not seen: the n-th such communicator of every rank is presumed the same one.
  if (info.hash == 0) info.hash = 0x5eed000000000000ull + ++unknown_comms_;
  return comms_[comm] = CommState{info, 0};
}

void Recorder::record_nccl(ThreadState& t, Nccl& n) {
  n.op.seq = next_seq();
  n.op.nvtx = t.nvtx.empty() ? 0 : t.nvtx.back();
  emit(n);
  t.claimants.push_back(n);
}

void Recorder::nccl_call_begin(const NcclCall& call) {
  on_thread([&](ThreadState& t) {
    ++t.nccl_depth;
    CommState& c = comm_state(call.comm);
    Nccl n;
    n.kind = call.kind;
    n.sendbuf = call.sendbuf;
    n.recvbuf = call.recvbuf;
    n.count = call.count;
    n.dtype = call.dtype;
    n.elem_bytes = call.elem_bytes;
    n.redop = call.redop;
    n.peer = call.peer;
    n.comm = c.info.hash;
    n.rank = c.info.rank;
    n.nranks = c.info.nranks;
    n.comm_seq = c.next_seq++;
    n.op.stream = stream_id(t, call.stream);
    if (t.group_depth > 0) {
      t.held.push_back(n);  // enqueued by NCCL only at the outermost ncclGroupEnd
      return;
    }
    t.claimants.clear();
    record_nccl(t, n);
  });
}

void Recorder::nccl_call_end() {
  TimedLock lock(mu_);
  ThreadState& t = quiet_thread_state();
  if (t.nccl_depth > 0) --t.nccl_depth;
  if (t.nccl_depth == 0 && t.group_depth == 0) t.claimants.clear();
}

void Recorder::nccl_group_start() {
  TimedLock lock(mu_);
  ++quiet_thread_state().group_depth;
}

void Recorder::nccl_group_end_begin() {
  on_thread([&](ThreadState& t) {
    ++t.nccl_depth;
    if (t.group_depth > 1) return;  // an inner group end launches nothing
    t.claimants.clear();
    std::vector<Nccl> held = std::move(t.held);
    t.held.clear();
    for (Nccl& n : held) record_nccl(t, n);
  });
}

void Recorder::nccl_group_end_end() {
  TimedLock lock(mu_);
  ThreadState& t = quiet_thread_state();
  if (t.nccl_depth > 0) --t.nccl_depth;
  if (t.group_depth > 0) --t.group_depth;
  if (t.group_depth == 0 && t.nccl_depth == 0) t.claimants.clear();
}

}  // namespace streamhaz::tracer
