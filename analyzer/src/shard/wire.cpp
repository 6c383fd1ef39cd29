#include "shard/wire.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace streamhaz::analysis::wire {
namespace {

// The fields of each message, in wire order: one list, walked by the writer and the reader,
// so the two ends cannot drift apart. The codec's method says how a field travels, each in
// 8 bytes: `u` unsigned, `i` signed (sign-extended), `b` bool, `e` enum, `str` length and
// bytes; `ints`, `ids` and `clock` a count, then that many values.
template <class C> void visit_fields(C& c, OpRef& o) {
  c.i(o.rank); c.u(o.seq); c.str(o.kind); c.str(o.name); c.u(o.stream); c.b(o.on_host);
  c.str(o.stream_name); c.str(o.nvtx); c.e(o.role); c.u(o.start_ns); c.u(o.end_ns);
}
template <class C> void visit_fields(C& c, Finding& f) {
  c.e(f.kind); c.str(f.key); c.str(f.title);
  visit_fields(c, f.first);
  visit_fields(c, f.second);
  c.str(f.buffer.name); c.u(f.buffer.alloc_base); c.u(f.buffer.alloc_bytes); c.u(f.buffer.offset);
  c.u(f.buffer.bytes); c.u(f.buffer.allocation); c.u(f.buffer.allocation_bytes); c.b(f.buffer.caching_allocator);
  c.i(f.sync_rank); c.u(f.sync_seq); c.str(f.missing_order); c.u(f.occurrences); c.ints(f.ranks);
  c.e(f.tier); c.b(f.exact); c.str(f.detail);
}
template <class C> void visit_fields(C& c, TraceSummary& s) {
  c.str(s.path); c.i(s.rank); c.u(s.records); c.u(s.operations); c.b(s.truncated); c.str(s.truncation);
  c.u(s.records_lost); c.u(s.dropped_records); c.u(s.exact_tier_pointer_only); c.b(s.unobserved);
}
template <class C> void visit_fields(C& c, PostRecord& p) {
  c.u(p.index);
  trace::Nccl& n = p.call;
  c.e(n.kind); c.u(n.count); c.u(n.nranks); c.u(n.rank); c.i(n.peer); c.u(n.comm); c.u(n.comm_seq);
  c.u(n.op.seq);  // names the call in an error about irregular input
  c.clock(p.start);
  c.ids(p.known);
}

// The writer's codec: every field as a 64-bit value.
struct Put {
  Writer& w;
  template <class T> void u(const T& v) { w.u64(v); }
  template <class T> void i(const T& v) { w.u64(uint64_t(int64_t(v))); }
  void b(bool v) { w.u64(v); }
  template <class T> void e(const T& v) { w.u64(uint64_t(v)); }
  void str(const std::string& s) { w.str(s); }
  void ints(const std::vector<int>& v) {
    w.u64(v.size());
    for (int x : v) i(x);
  }
  void ids(const std::vector<uint64_t>& v) {
    w.u64(v.size());
    for (uint64_t x : v) w.u64(x);
  }
  void clock(const VectorClock& c) {
    w.u64(c.size());
    for (size_t k = 0; k < c.size(); ++k) w.u64(c.data()[k]);
  }
};

// The reader's codec: each value back to its field's type.
struct Get {
  Reader& r;
  template <class T> void u(T& v) { v = T(r.u64()); }
  template <class T> void i(T& v) { v = T(int64_t(r.u64())); }
  void b(bool& v) { v = r.u64() != 0; }
  template <class T> void e(T& v) { v = T(r.u64()); }
  void str(std::string& s) { s = r.str(); }
  void ints(std::vector<int>& v) {
    const uint64_t n = r.u64();
    for (uint64_t k = 0; k < n; ++k) v.push_back(int(int64_t(r.u64())));
  }
  void ids(std::vector<uint64_t>& v) {
    const uint64_t n = r.u64();
    for (uint64_t k = 0; k < n; ++k) v.push_back(r.u64());
  }
  void clock(VectorClock& c) {
    const uint64_t n = r.u64();
    for (uint64_t k = 0; k < n; ++k) c.set(TimelineId(k), ClockValue(r.u64()));
  }
};

// Writing only reads the message: the one field list takes it as non-const.
template <class M> void put(Writer& w, const M& m) {
  Put c{w};
  visit_fields(c, const_cast<M&>(m));
}
template <class M> M get(Reader& r) {
  M m;
  Get c{r};
  visit_fields(c, m);
  return m;
}

}  // namespace

void Writer::u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }

void Writer::str(const std::string& s) {
  u64(s.size());
  out_ += s;
}

void Writer::post(const PostRecord& p) { put(*this, p); }
void Writer::finding(const Finding& f) { put(*this, f); }
void Writer::summary(const TraceSummary& s) { put(*this, s); }

uint64_t Reader::u64() {
  if (at_ + 8 > in_.size()) throw std::runtime_error("sharded check: short message from a peer process");
  uint64_t v;
  std::memcpy(&v, in_.data() + at_, 8);
  at_ += 8;
  return v;
}

std::string Reader::str() {
  const uint64_t n = u64();
  if (n > in_.size() - at_) throw std::runtime_error("sharded check: short message from a peer process");
  std::string s = in_.substr(at_, n);
  at_ += n;
  return s;
}

PostRecord Reader::post() { return get<PostRecord>(*this); }
Finding Reader::finding() { return get<Finding>(*this); }
TraceSummary Reader::summary() { return get<TraceSummary>(*this); }

}  // namespace streamhaz::analysis::wire
