#include "shard/wire.h"

#include <cstring>
#include <stdexcept>

namespace streamhaz::analysis::wire {

void Writer::u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }

void Writer::str(const std::string& s) {
  u64(s.size());
  out_ += s;
}

void Writer::post(const PostRecord& p) {
  u64(p.index);
  const trace::Nccl& n = p.call;
  u64(uint64_t(n.kind));
  u64(n.count);
  u64(n.nranks);
  u64(n.rank);
  u64(uint64_t(int64_t(n.peer)));
  u64(n.comm);
  u64(n.comm_seq);
  u64(n.op.seq);  // names the call in an error about irregular input
  u64(p.start.size());
  for (size_t i = 0; i < p.start.size(); ++i) u64(p.start.data()[i]);
  u64(p.known.size());
  for (uint64_t id : p.known) u64(id);
}

namespace {
void op(Writer& w, const OpRef& o) {
  w.u64(uint64_t(int64_t(o.rank)));
  w.u64(o.seq);
  w.str(o.kind);
  w.str(o.name);
  w.u64(o.stream);
  w.u64(o.on_host);
  w.str(o.stream_name);
  w.str(o.nvtx);
  w.u64(uint64_t(o.role));
  w.u64(o.start_ns);
  w.u64(o.end_ns);
}
OpRef op(Reader& r) {
  OpRef o;
  o.rank = int(int64_t(r.u64()));
  o.seq = r.u64();
  o.kind = r.str();
  o.name = r.str();
  o.stream = trace::StreamId(r.u64());
  o.on_host = r.u64();
  o.stream_name = r.str();
  o.nvtx = r.str();
  o.role = trace::AccessMode(r.u64());
  o.start_ns = r.u64();
  o.end_ns = r.u64();
  return o;
}
}  // namespace

void Writer::finding(const Finding& f) {
  u64(uint64_t(f.kind));
  str(f.key);
  str(f.title);
  op(*this, f.first);
  op(*this, f.second);
  str(f.buffer.name);
  u64(f.buffer.alloc_base);
  u64(f.buffer.alloc_bytes);
  u64(f.buffer.offset);
  u64(f.buffer.bytes);
  u64(f.buffer.allocation);
  u64(f.buffer.allocation_bytes);
  u64(f.buffer.caching_allocator);
  u64(uint64_t(int64_t(f.sync_rank)));
  u64(f.sync_seq);
  str(f.missing_order);
  u64(f.occurrences);
  u64(f.ranks.size());
  for (int r : f.ranks) u64(uint64_t(int64_t(r)));
  u64(uint64_t(f.tier));
  u64(f.exact);
  str(f.detail);
}

void Writer::summary(const TraceSummary& s) {
  str(s.path);
  u64(uint64_t(int64_t(s.rank)));
  u64(s.records);
  u64(s.operations);
  u64(s.truncated);
  str(s.truncation);
  u64(s.records_lost);
  u64(s.dropped_records);
  u64(s.exact_tier_pointer_only);
}

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

PostRecord Reader::post() {
  PostRecord p;
  p.index = uint32_t(u64());
  trace::Nccl& n = p.call;
  n.kind = trace::NcclKind(u64());
  n.count = u64();
  n.nranks = uint32_t(u64());
  n.rank = uint32_t(u64());
  n.peer = int32_t(int64_t(u64()));
  n.comm = u64();
  n.comm_seq = u64();
  n.op.seq = u64();
  const uint64_t size = u64();
  for (uint64_t i = 0; i < size; ++i) p.start.set(TimelineId(i), ClockValue(u64()));
  const uint64_t known = u64();
  for (uint64_t i = 0; i < known; ++i) p.known.push_back(u64());
  return p;
}

Finding Reader::finding() {
  Finding f;
  f.kind = FindingKind(u64());
  f.key = str();
  f.title = str();
  f.first = op(*this);
  f.second = op(*this);
  f.buffer.name = str();
  f.buffer.alloc_base = u64();
  f.buffer.alloc_bytes = u64();
  f.buffer.offset = u64();
  f.buffer.bytes = u64();
  f.buffer.allocation = u64();
  f.buffer.allocation_bytes = u64();
  f.buffer.caching_allocator = u64() != 0;
  f.sync_rank = decltype(f.sync_rank)(int64_t(u64()));
  f.sync_seq = u64();
  f.missing_order = str();
  f.occurrences = u64();
  const uint64_t ranks = u64();
  for (uint64_t i = 0; i < ranks; ++i) f.ranks.push_back(int(int64_t(u64())));
  f.tier = trace::FootprintTier(u64());
  f.exact = u64();
  f.detail = str();
  return f;
}

TraceSummary Reader::summary() {
  TraceSummary s;
  s.path = str();
  s.rank = int(int64_t(u64()));
  s.records = u64();
  s.operations = u64();
  s.truncated = u64();
  s.truncation = str();
  s.records_lost = u64();
  s.dropped_records = u64();
  s.exact_tier_pointer_only = u64();
  return s;
}

}  // namespace streamhaz::analysis::wire
