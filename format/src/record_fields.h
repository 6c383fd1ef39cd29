// The field list of every record, written once and walked by both the encoder and the
// decoder: `visit_fields(codec, record)` calls one codec method per field, in on-disk order.
// The method says how the field is encoded:
//   seq        zigzag delta from the previous seq of the chunk
//   ptr        zigzag delta from the previous pointer of the chunk
//   timing_seq zigzag delta from the previous Timing's op seq
//   start_ns   zigzag delta from the previous Timing's start
//   end_ns     unsigned distance from the start just coded
//   u64/u32    LEB128 varint        i32  zigzag varint      u8, flag  one varint
//   e          enum stored as one varint, checked against its count on decode
//   str        varint length + bytes
#pragma once

#include "streamhaz/trace/records.h"

namespace streamhaz::trace::detail {

template <class C> void visit_op(C& c, OpCommon& o) {
  c.seq(o.seq);
  c.u32(o.stream);
  c.u32(o.nvtx);
}

template <class C> void visit_fields(C& c, StringDef& r) { c.u32(r.id); c.str(r.text); }
template <class C> void visit_fields(C& c, Meta& r) { c.str(r.json); }
template <class C> void visit_fields(C& c, HostThread& r) { c.u64(r.tid); }
template <class C> void visit_fields(C& c, StreamCreate& r) {
  c.seq(r.seq); c.u32(r.stream); c.u32(r.device); c.u32(r.flags); c.i32(r.priority); c.u64(r.handle);
}
template <class C> void visit_fields(C& c, StreamName& r) { c.u32(r.stream); c.u32(r.name); }
template <class C> void visit_fields(C& c, EventCreate& r) { c.u32(r.event); c.u32(r.flags); }
template <class C> void visit_fields(C& c, EventRecord& r) { c.seq(r.seq); c.u32(r.event); c.u32(r.stream); }
template <class C> void visit_fields(C& c, EventWait& r) { c.seq(r.seq); c.u32(r.stream); c.u32(r.event); }
template <class C> void visit_fields(C& c, EventSync& r) { c.seq(r.seq); c.u32(r.event); }
template <class C> void visit_fields(C& c, EventQuery& r) { c.seq(r.seq); c.u32(r.event); c.flag(r.complete); }
template <class C> void visit_fields(C& c, StreamSync& r) { c.seq(r.seq); c.u32(r.stream); }
template <class C> void visit_fields(C& c, StreamQuery& r) { c.seq(r.seq); c.u32(r.stream); c.flag(r.complete); }
template <class C> void visit_fields(C& c, DeviceSync& r) { c.seq(r.seq); c.u32(r.device); }
template <class C> void visit_fields(C& c, Kernel& r) {
  visit_op(c, r.op);
  c.u32(r.name);
  for (uint32_t& g : r.grid) c.u32(g);
  for (uint32_t& b : r.block) c.u32(b);
  c.u32(r.shared_mem);
  c.str(r.params);
}
template <class C> void visit_fields(C& c, Memcpy& r) {
  visit_op(c, r.op);
  c.ptr(r.dst); c.ptr(r.src); c.u64(r.width); c.u64(r.rows);
  if (r.rows != 1) { c.u64(r.dst_pitch); c.u64(r.src_pitch); }
  c.e(r.kind, kMemcpyKindCount); c.u32(r.flags);
}
template <class C> void visit_fields(C& c, Memset& r) {
  visit_op(c, r.op);
  c.ptr(r.dst); c.u64(r.width); c.u64(r.rows);
  if (r.rows != 1) c.u64(r.pitch);
  c.u32(r.value); c.u32(r.flags);
}
template <class C> void visit_fields(C& c, HostFunc& r) { visit_op(c, r.op); }
template <class C> void visit_fields(C& c, Nccl& r) {
  visit_op(c, r.op);
  c.e(r.kind, kNcclKindCount);
  c.ptr(r.sendbuf); c.ptr(r.recvbuf); c.u64(r.count);
  c.u8(r.dtype); c.u8(r.elem_bytes); c.u8(r.redop); c.i32(r.peer);
  c.u64(r.comm); c.u32(r.rank); c.u32(r.nranks); c.u64(r.comm_seq);
}
template <class C> void visit_fields(C& c, Alloc& r) {
  c.seq(r.seq); c.ptr(r.ptr); c.u64(r.bytes); c.u32(r.device); c.e(r.kind, kAllocKindCount); c.u32(r.stream);
}
template <class C> void visit_fields(C& c, Free& r) {
  c.seq(r.seq); c.ptr(r.ptr); c.e(r.kind, kAllocKindCount); c.u32(r.stream);
}
template <class C> void visit_fields(C& c, BufferName& r) { c.ptr(r.ptr); c.u64(r.bytes); c.u32(r.name); }
template <class C> void visit_fields(C& c, Access& r) {
  c.timing_seq(r.op_seq); c.ptr(r.ptr); c.u64(r.bytes);
  c.e_min1(r.mode, 4); c.e(r.tier, 4);
}
template <class C> void visit_fields(C& c, CaptureBegin& r) { c.seq(r.seq); c.u32(r.stream); c.u64(r.graph); }
template <class C> void visit_fields(C& c, CaptureEnd& r) { c.seq(r.seq); c.u32(r.stream); c.u64(r.graph); }
template <class C> void visit_fields(C& c, GraphLaunch& r) { visit_op(c, r.op); c.u64(r.graph); }
template <class C> void visit_fields(C& c, Timing& r) { c.timing_seq(r.op_seq); c.start_ns(r.start_ns); c.end_ns(r.end_ns, r.start_ns); }
template <class C> void visit_fields(C& c, End& r) { c.u64(r.records); }

// The delta state of one chunk, shared by encoder and decoder.
struct DeltaState {
  uint64_t seq = 0;
  uint64_t ptr = 0;
  uint64_t timing_seq = 0;
  uint64_t start_ns = 0;
};

inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

}  // namespace streamhaz::trace::detail
