// The field list of every record, written once and walked by the encoder, the decoder and
// the JSON export: `visit_fields(codec, record)` calls one codec method per field, in on-disk
// order, with the field's name.
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
  c.seq("seq", o.seq);
  c.u32("stream", o.stream);
  c.u32("nvtx", o.nvtx);
}

template <class C> void visit_fields(C& c, StringDef& r) { c.u32("id", r.id); c.str("text", r.text); }
template <class C> void visit_fields(C& c, Meta& r) { c.str("json", r.json); }
template <class C> void visit_fields(C& c, HostThread& r) { c.u64("tid", r.tid); }
template <class C> void visit_fields(C& c, StreamCreate& r) {
  c.seq("seq", r.seq); c.u32("stream", r.stream); c.u32("device", r.device); c.u32("flags", r.flags); c.i32("priority", r.priority); c.u64("handle", r.handle);
}
template <class C> void visit_fields(C& c, StreamName& r) { c.u32("stream", r.stream); c.u32("name", r.name); }
template <class C> void visit_fields(C& c, EventCreate& r) { c.u32("event", r.event); c.u32("flags", r.flags); }
template <class C> void visit_fields(C& c, EventRecord& r) { c.seq("seq", r.seq); c.u32("event", r.event); c.u32("stream", r.stream); }
template <class C> void visit_fields(C& c, EventWait& r) { c.seq("seq", r.seq); c.u32("stream", r.stream); c.u32("event", r.event); }
template <class C> void visit_fields(C& c, EventSync& r) { c.seq("seq", r.seq); c.u32("event", r.event); }
template <class C> void visit_fields(C& c, EventQuery& r) { c.seq("seq", r.seq); c.u32("event", r.event); c.flag("complete", r.complete); }
template <class C> void visit_fields(C& c, StreamSync& r) { c.seq("seq", r.seq); c.u32("stream", r.stream); }
template <class C> void visit_fields(C& c, StreamQuery& r) { c.seq("seq", r.seq); c.u32("stream", r.stream); c.flag("complete", r.complete); }
template <class C> void visit_fields(C& c, DeviceSync& r) { c.seq("seq", r.seq); c.u32("device", r.device); }
template <class C> void visit_fields(C& c, Kernel& r) {
  visit_op(c, r.op);
  c.u32("name", r.name);
  c.u32("grid_x", r.grid[0]); c.u32("grid_y", r.grid[1]); c.u32("grid_z", r.grid[2]);
  c.u32("block_x", r.block[0]); c.u32("block_y", r.block[1]); c.u32("block_z", r.block[2]);
  c.u32("shared_mem", r.shared_mem);
  c.str("params", r.params);
}
template <class C> void visit_fields(C& c, Memcpy& r) {
  visit_op(c, r.op);
  c.ptr("dst", r.dst); c.ptr("src", r.src); c.u64("width", r.width); c.u64("rows", r.rows);
  if (r.rows != 1) { c.u64("dst_pitch", r.dst_pitch); c.u64("src_pitch", r.src_pitch); }
  c.e("kind", r.kind, kMemcpyKindCount); c.u32("flags", r.flags);
}
template <class C> void visit_fields(C& c, Memset& r) {
  visit_op(c, r.op);
  c.ptr("dst", r.dst); c.u64("width", r.width); c.u64("rows", r.rows);
  if (r.rows != 1) c.u64("pitch", r.pitch);
  c.u32("value", r.value); c.u32("flags", r.flags);
}
template <class C> void visit_fields(C& c, HostFunc& r) { visit_op(c, r.op); }
template <class C> void visit_fields(C& c, Nccl& r) {
  visit_op(c, r.op);
  c.e("kind", r.kind, kNcclKindCount);
  c.ptr("sendbuf", r.sendbuf); c.ptr("recvbuf", r.recvbuf); c.u64("count", r.count);
  c.u8("dtype", r.dtype); c.u8("elem_bytes", r.elem_bytes); c.u8("redop", r.redop); c.i32("peer", r.peer);
  c.u64("comm", r.comm); c.u32("rank", r.rank); c.u32("nranks", r.nranks); c.u64("comm_seq", r.comm_seq);
}
template <class C> void visit_fields(C& c, Alloc& r) {
  c.seq("seq", r.seq); c.ptr("ptr", r.ptr); c.u64("bytes", r.bytes); c.u32("device", r.device); c.e("kind", r.kind, kAllocKindCount); c.u32("stream", r.stream);
}
template <class C> void visit_fields(C& c, Free& r) {
  c.seq("seq", r.seq); c.ptr("ptr", r.ptr); c.e("kind", r.kind, kAllocKindCount); c.u32("stream", r.stream);
}
template <class C> void visit_fields(C& c, BufferName& r) { c.ptr("ptr", r.ptr); c.u64("bytes", r.bytes); c.u32("name", r.name); }
template <class C> void visit_fields(C& c, Access& r) {
  c.timing_seq("op_seq", r.op_seq); c.ptr("ptr", r.ptr); c.u64("bytes", r.bytes);
  c.e_min1("mode", r.mode, 4); c.e("tier", r.tier, kFootprintTierCount);
}
template <class C> void visit_fields(C& c, CaptureBegin& r) { c.seq("seq", r.seq); c.u32("stream", r.stream); c.u64("graph", r.graph); }
template <class C> void visit_fields(C& c, CaptureEnd& r) { c.seq("seq", r.seq); c.u32("stream", r.stream); c.u64("graph", r.graph); }
template <class C> void visit_fields(C& c, GraphLaunch& r) { visit_op(c, r.op); c.u64("graph", r.graph); }
template <class C> void visit_fields(C& c, Timing& r) { c.timing_seq("op_seq", r.op_seq); c.start_ns("start_ns", r.start_ns); c.end_ns("end_ns", r.end_ns, r.start_ns); }
template <class C> void visit_fields(C& c, End& r) { c.u64("records", r.records); }
template <class C> void visit_fields(C& c, FrameDef& r) {
  c.u32("id", r.id); c.e_min1("kind", r.kind, kFrameKindLimit); c.u32("file", r.file); c.u32("function", r.function);
  c.u32("line", r.line); c.u32("module", r.module); c.u64("offset", r.offset);
}
template <class C> void visit_fields(C& c, ModuleDef& r) {
  c.u32("id", r.id); c.u32("path", r.path); c.u64("base", r.base); c.u64("size", r.size); c.u32("build_id", r.build_id);
}
template <class C> void visit_fields(C& c, CallsiteDef& r) { c.u32("id", r.id); c.u32("parent", r.parent); c.u32("frame", r.frame); }
// seq as a delta from the previous seq: the record it follows has (nearly) the same one.
template <class C> void visit_fields(C& c, StackRef& r) { c.seq("seq", r.seq); c.u32("callsite", r.callsite); }
template <class C> void visit_fields(C& c, RangeEdge& r) { c.seq("seq", r.seq); c.u32("path", r.path); c.flag("push", r.push); }
template <class C> void visit_fields(C& c, TensorAlloc& r) {
  c.timing_seq("before_seq", r.before_seq); c.ptr("ptr", r.ptr); c.u64("bytes", r.bytes); c.u32("device", r.device);
  c.u64("stream", r.stream); c.u32("callsite", r.callsite);
}

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
