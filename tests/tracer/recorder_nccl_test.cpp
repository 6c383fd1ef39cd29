#include <catch2/catch.hpp>

#include "record_log.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

namespace {

NcclCall all_reduce(uint64_t comm, uint64_t stream, uint64_t buf, uint64_t count) {
  NcclCall c;
  c.kind = NcclKind::AllReduce;
  c.sendbuf = c.recvbuf = buf;
  c.count = count;
  c.dtype = 7;  // ncclFloat32
  c.elem_bytes = 4;
  c.comm = comm;
  c.stream = StreamRef{stream, 0};
  return c;
}

}  // namespace

TEST_CASE("an NCCL call claims the kernel it launches") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, kStreamNonBlocking, 0);
  rec.nccl_comm_initialized(0xc0, CommInfo{0xabcdef, 1, 2});
  rec.nccl_call_begin(all_reduce(0xc0, 0xa, 0x1000, 256));
  rec.kernel_launched(StreamRef{0xa, 0}, 77, testing::launch(9, "ncclDevKernel_AllReduce"));
  rec.nccl_call_end();
  rec.kernel_launched(StreamRef{0xa, 0}, 78, testing::launch(10, "after"));

  auto ncc = log.all<Nccl>();
  REQUIRE(ncc.size() == 1);
  CHECK(ncc[0].comm == 0xabcdef);
  CHECK(ncc[0].rank == 1);
  CHECK(ncc[0].nranks == 2);
  CHECK(ncc[0].comm_seq == 0);
  CHECK(ncc[0].op.stream == 1);
  CHECK(ncc[0].count == 256);
  auto kernels = log.all<Kernel>();
  REQUIRE(kernels.size() == 1);  // NCCL's kernel is not an operation of its own
  rec.activity(77, 10, 20);
  auto timings = log.all<Timing>();
  REQUIRE(timings.size() == 1);
  CHECK(timings[0].op_seq == ncc[0].op.seq);
}

TEST_CASE("the per-communicator sequence counts calls on each communicator") {
  RecordLog log;
  Recorder rec(log);
  rec.nccl_comm_initialized(0xc0, CommInfo{1, 0, 2});
  rec.nccl_comm_initialized(0xc1, CommInfo{2, 0, 2});
  for (uint64_t comm : {0xc0, 0xc1, 0xc0, 0xc0}) {
    rec.nccl_call_begin(all_reduce(comm, 0, 0x1000, 1));
    rec.nccl_call_end();
  }
  auto ncc = log.all<Nccl>();
  REQUIRE(ncc.size() == 4);
  CHECK(ncc[0].comm_seq == 0);
  CHECK(ncc[1].comm_seq == 0);
  CHECK(ncc[2].comm_seq == 1);
  CHECK(ncc[3].comm_seq == 2);
}

TEST_CASE("grouped calls are recorded at the group end and share its kernels") {
  RecordLog log;
  Recorder rec(log);
  rec.nccl_comm_initialized(0xc0, CommInfo{5, 0, 2});
  rec.stream_created(0xa, 0, 0, 0);
  rec.nccl_group_start();
  NcclCall send;
  send.kind = NcclKind::Send;
  send.sendbuf = 0x1000;
  send.count = 16;
  send.peer = 1;
  send.comm = 0xc0;
  send.stream = StreamRef{0xa, 0};
  rec.nccl_call_begin(send);
  rec.nccl_call_end();
  NcclCall recv = send;
  recv.kind = NcclKind::Recv;
  recv.sendbuf = 0;
  recv.recvbuf = 0x2000;
  rec.nccl_call_begin(recv);
  rec.nccl_call_end();
  CHECK(log.count<Nccl>() == 0);  // nothing enqueued before ncclGroupEnd
  rec.event_recorded(0xe1, StreamRef{0xa, 0});
  rec.nccl_group_end_begin();
  rec.kernel_launched(StreamRef{0xa, 0}, 50, testing::launch(9, "ncclDevKernel_SendRecv"));
  rec.nccl_group_end_end();
  rec.kernel_launched(StreamRef{0xa, 0}, 51, testing::launch(10, "user"));

  auto ncc = log.all<Nccl>();
  REQUIRE(ncc.size() == 2);
  CHECK(ncc[0].kind == NcclKind::Send);
  CHECK(ncc[1].kind == NcclKind::Recv);
  CHECK(ncc[0].op.seq > log.all<EventRecord>()[0].seq);
  CHECK(ncc[0].comm_seq == 0);
  CHECK(ncc[1].comm_seq == 1);
  CHECK(log.count<Kernel>() == 1);
  rec.activity(50, 100, 200);
  auto timings = log.all<Timing>();
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].op_seq == ncc[0].op.seq);
  CHECK(timings[1].op_seq == ncc[1].op.seq);
  CHECK(rec.pending_correlations() == 1);  // the user kernel's
}

TEST_CASE("nested groups record only at the outermost end") {
  RecordLog log;
  Recorder rec(log);
  rec.nccl_group_start();
  rec.nccl_group_start();
  rec.nccl_call_begin(all_reduce(0xc0, 0, 0x1000, 4));
  rec.nccl_call_end();
  rec.nccl_group_end_begin();
  rec.nccl_group_end_end();
  CHECK(log.count<Nccl>() == 0);
  rec.nccl_group_end_begin();
  rec.kernel_launched(StreamRef{0, 0}, 3, testing::launch(9, "ncclDevKernel"));
  rec.nccl_group_end_end();
  CHECK(log.count<Nccl>() == 1);
  CHECK(log.count<Kernel>() == 0);
}

TEST_CASE("a kernel on another stream inside a group is lent to every call") {
  RecordLog log;
  Recorder rec(log);
  rec.stream_created(0xa, 0, 0, 0);
  rec.stream_created(0xb, 0, 0, 0);
  rec.nccl_group_start();
  rec.nccl_call_begin(all_reduce(0xc0, 0xa, 0x1000, 4));
  rec.nccl_call_end();
  rec.nccl_call_begin(all_reduce(0xc0, 0xb, 0x2000, 4));
  rec.nccl_call_end();
  rec.nccl_group_end_begin();
  rec.kernel_launched(StreamRef{0xa, 0}, 60, testing::launch(9, "nccl"));
  rec.kernel_launched(StreamRef{0xfff, 0}, 61, testing::launch(9, "nccl"));
  rec.nccl_group_end_end();
  rec.activity(60, 1, 2);
  rec.activity(61, 3, 4);
  auto ncc = log.all<Nccl>();
  auto timings = log.all<Timing>();
  REQUIRE(timings.size() == 3);
  CHECK(timings[0].op_seq == ncc[0].op.seq);  // same stream: the first call only
  CHECK(timings[1].op_seq == ncc[0].op.seq);  // internal stream: both
  CHECK(timings[2].op_seq == ncc[1].op.seq);
}

TEST_CASE("work NCCL issues outside a collective is recorded as itself") {
  RecordLog log;
  Recorder rec(log);
  rec.kernel_launched(StreamRef{0, 0}, 1, testing::launch(9, "init"));
  rec.nccl_call_begin(all_reduce(0xc0, 0, 0x1000, 4));
  Memcpy m;
  rec.memcpy_issued(StreamRef{0, 0}, 2, m);
  rec.nccl_call_end();
  CHECK(log.count<Kernel>() == 1);
  CHECK(log.count<Memcpy>() == 1);
}

TEST_CASE("an unknown communicator is described by the query, else numbered") {
  RecordLog log;
  Recorder rec(log, {}, [](uint64_t comm) -> std::optional<CommInfo> {
    if (comm == 0xc0) return CommInfo{0, 3, 4};
    return std::nullopt;
  });
  rec.nccl_call_begin(all_reduce(0xc0, 0, 0x1000, 4));
  rec.nccl_call_end();
  rec.nccl_call_begin(all_reduce(0xc1, 0, 0x1000, 4));
  rec.nccl_call_end();
  auto ncc = log.all<Nccl>();
  CHECK(ncc[0].rank == 3);
  CHECK(ncc[0].nranks == 4);
  CHECK(ncc[0].comm != 0);
  CHECK(ncc[1].comm != ncc[0].comm);
}
