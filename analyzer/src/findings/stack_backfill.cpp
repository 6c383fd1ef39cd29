// attach_stacks(): a second read of the traces with findings, as for GPU times. The main pass
// keeps no stacks (they would cost memory per operation); the few operations, allocations and
// streams findings name are looked up here. Everything needed comes before or right after the
// last operation named, so each file is read only up to there.
#include "streamhaz/analysis/attribution.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "model/stack_table.h"
#include "model/stream_kind.h"
#include "symbols/native_symbolizer.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {
namespace {

using trace::CallsiteId;
using trace::StreamId;

// What the findings of one rank ask for.
struct RankWants {
  std::unordered_map<uint64_t, std::vector<Stack*>> op_stacks;  // by seq
  std::unordered_map<StreamId, std::vector<StreamOrigin*>> streams;
  // Buffers are located in the allocation live when the later operation was issued.
  std::unordered_map<uint64_t, std::vector<BufferRef*>> buffers;  // by that operation's seq
  uint64_t last_seq = 0;

  void call(uint64_t seq, Stack* stack) {
    op_stacks[seq].push_back(stack);
    last_seq = std::max(last_seq, seq);
  }
};

struct LiveAllocation {
  uint64_t bytes = 0;
  uint64_t seq = 0;
};

// A block PyTorch's allocator history says a tensor got, and where the calls place it.
struct TensorBlock {
  uint64_t before_seq = 0;
  uint64_t ptr = 0;
  uint64_t bytes = 0;
  CallsiteId callsite = 0;
};

struct StreamFacts {
  uint64_t created_seq = 0;
  uint32_t flags = 0;
  uint64_t first_op_seq = 0;
};

bool is_caching_allocator(const Stack& stack) {
  for (const StackFrame& f : stack) {
    if (f.kind != trace::FrameKind::Native) continue;
    const std::string base = f.module.substr(f.module.rfind('/') + 1);
    if (base.rfind("libc10_cuda", 0) == 0 || f.function.find("CUDACachingAllocator") != std::string::npos) return true;
  }
  return false;
}

// Why a caching-allocator buffer's tensor is unknown, from what the trace says of the history.
std::string tensor_unknown_reason(const nlohmann::json& header) {
  const auto h = header.find("allocator_history");
  if (h == header.end() || !h->is_object())
    return "the trace holds no allocator history (`streamhaz run --allocator-history on` records each tensor's "
           "own line in PyTorch processes)";
  const std::string status = h->value("status", "");
  if (status == "unavailable") return "no allocator history: " + h->value("reason", std::string("no reason given"));
  if (status == "recorded")
    return "the allocator history holds no block of these bytes allocated before this operation (it keeps the "
           "newest allocations only)";
  return "the allocator history was switched on but never handed over: the process ended without Python's exit "
         "handlers (killed, or os._exit), or never imported torch";
}

// The tensor block of `addr` when the operation `seq` was issued: the newest allocation of it
// the calls place before `seq`, and not before the segment itself (an address reused by a
// later cudaMalloc is another segment). Allocations the history could not place come first.
const TensorBlock* tensor_at(const std::vector<TensorBlock>& blocks, uint64_t addr, uint64_t seq, uint64_t segment_seq) {
  const TensorBlock* best = nullptr;
  for (const TensorBlock& b : blocks) {
    if (addr < b.ptr || addr - b.ptr >= b.bytes) continue;
    if (b.before_seq > seq || (b.before_seq && b.before_seq <= segment_seq)) continue;
    if (!best || b.before_seq >= best->before_seq) best = &b;  // ties: the later in the history
  }
  return best;
}

void attach_rank(const std::string& path, RankWants& wants, NativeSymbolizer* symbolizer) {
  trace::TraceReader reader(path);
  // Traces from before format version 3 hold no stacks.
  if (reader.header().value("version", 0) < 3) return;
  StackTable table;
  std::unordered_set<uint64_t> keep;  // seqs whose StackRef is wanted
  for (const auto& [seq, stacks] : wants.op_stacks) keep.insert(seq);
  std::unordered_map<uint64_t, CallsiteId> stack_of;
  std::map<uint64_t, LiveAllocation> live;  // by base address
  struct Located {
    BufferRef* buffer;
    uint64_t base;
    LiveAllocation allocation;
    uint64_t seq;  // of the operation that located it
  };
  std::vector<Located> located;
  // The allocator history comes at the end of the file: read on for it where buffers are wanted.
  const bool history = !wants.buffers.empty() && reader.header().contains("allocator_history");
  std::vector<uint64_t> wanted_addresses;  // the history keeps only blocks holding one of them
  for (const auto& [seq, bufs] : wants.buffers)
    for (const BufferRef* buf : bufs) wanted_addresses.push_back(buf->alloc_base + buf->offset);
  std::vector<TensorBlock> blocks;
  std::map<StreamId, StreamFacts> streams;
  constexpr int kGraceRecords = 256;
  int past_last = 0;

  trace::Record r;
  while (reader.next(r)) {
    if (const auto* t = std::get_if<trace::TensorAlloc>(&r)) {
      const auto holds = [t](uint64_t addr) { return addr >= t->ptr && addr - t->ptr < t->bytes; };
      if (history && std::any_of(wanted_addresses.begin(), wanted_addresses.end(), holds))
        blocks.push_back({t->before_seq, t->ptr, t->bytes, t->callsite});
      continue;
    }
    if (const auto* ref = std::get_if<trace::StackRef>(&r)) {
      if (keep.count(ref->seq)) stack_of[ref->seq] = ref->callsite;
      continue;
    }
    if (trace::is_stack_record(r) || std::holds_alternative<trace::StringDef>(r)) {
      table.add(r);
      continue;
    }
    const uint64_t seq = trace::api_seq(r);
    if (!seq) continue;
    // A StackRef comes right after its record; records of other host threads may interleave a
    // little out of seq order, so stop a few records past the last one wanted.
    if (seq > wants.last_seq && ++past_last > kGraceRecords) {
      if (!history) break;
      continue;  // only the allocator history, at the file's end, is read on
    }
    if (auto b = wants.buffers.find(seq); b != wants.buffers.end()) {
      for (BufferRef* buf : b->second) {
        const uint64_t addr = buf->alloc_base + buf->offset;
        auto it = live.upper_bound(addr);
        if (it == live.begin()) continue;
        --it;
        if (addr - it->first < it->second.bytes) located.push_back({buf, it->first, it->second, seq});
      }
    }
    if (const auto* a = std::get_if<trace::Alloc>(&r)) {
      live[a->ptr] = {a->bytes, seq};
      keep.insert(seq);
    } else if (const auto* f = std::get_if<trace::Free>(&r)) {
      live.erase(f->ptr);
    } else if (const auto* s = std::get_if<trace::StreamCreate>(&r)) {
      streams[s->stream].created_seq = seq;
      streams[s->stream].flags = s->flags;
      keep.insert(seq);
    } else if (const trace::OpCommon* op = trace::op_common(r)) {
      StreamFacts& st = streams[op->stream];
      if (!st.first_op_seq) {
        st.first_op_seq = seq;
        keep.insert(seq);
      }
    }
  }

  auto stack_at = [&](uint64_t seq) -> Stack {
    auto it = stack_of.find(seq);
    return it != stack_of.end() ? table.resolve(it->second, symbolizer) : Stack{};
  };
  for (auto& [seq, stacks] : wants.op_stacks) {
    const Stack stack = stack_at(seq);
    for (Stack* s : stacks) *s = stack;
  }
  for (const Located& l : located) {
    BufferRef* buf = l.buffer;
    buf->allocation = l.base;
    buf->allocation_bytes = l.allocation.bytes;
    buf->alloc_stack = stack_at(l.allocation.seq);
    buf->caching_allocator = is_caching_allocator(buf->alloc_stack);
    if (const TensorBlock* t = tensor_at(blocks, buf->alloc_base + buf->offset, l.seq, l.allocation.seq)) {
      buf->tensor = t->ptr;
      buf->tensor_bytes = t->bytes;
      buf->tensor_stack = t->callsite ? table.resolve(t->callsite, symbolizer) : Stack{};
    } else if (buf->caching_allocator) {
      buf->tensor_unknown = tensor_unknown_reason(reader.header());
    }
  }
  // How many streams each creation call site made: PyTorch's pool makes many from one call.
  std::unordered_map<CallsiteId, int> made_by;
  for (const auto& [id, st] : streams)
    if (auto it = stack_of.find(st.created_seq); st.created_seq && it != stack_of.end()) ++made_by[it->second];
  for (auto& [id, origins] : wants.streams) {
    auto st = streams.find(id);
    if (st == streams.end() || default_stream(st->second.flags)) continue;  // not made by the program
    StreamOrigin origin;
    auto created = stack_of.find(st->second.created_seq);
    if (st->second.created_seq && created != stack_of.end() && created->second && made_by[created->second] == 1) {
      origin = {StreamOriginKind::Created, table.resolve(created->second, symbolizer)};
    } else if (Stack first = stack_at(st->second.first_op_seq); !first.empty()) {
      origin = {StreamOriginKind::FirstUsed, std::move(first)};
      if (st->second.created_seq && created != stack_of.end() && created->second) {
        origin.pool_stack = table.resolve(created->second, symbolizer);
        origin.pool_streams = static_cast<uint32_t>(made_by[created->second]);
      }
    }
    for (StreamOrigin* o : origins) *o = origin;
  }
}

}  // namespace

bool native_symbols_available() { return NativeSymbolizer::available(); }

void attach_stacks(AnalysisResult& result, const AttributionOptions& options) {
  std::map<int, RankWants> wants;
  for (Finding& f : result.findings) {
    for (OpRef* op : {&f.first, &f.second}) {
      if (!op->seq) continue;
      RankWants& w = wants[op->rank];
      w.call(op->seq, &op->stack);
      if (!op->on_host) w.streams[op->stream].push_back(&op->stream_origin);
    }
    if (f.kind != FindingKind::OverSync && f.buffer.alloc_base && f.second.seq) {
      // The later operation's seq: the allocation both touched was live then (a cudaFree
      // on the later side has not taken effect yet when its own record is read).
      wants[f.second.rank].buffers[f.second.seq].push_back(&f.buffer);
    }
    if (f.sync_seq) wants[f.sync_rank].call(f.sync_seq, &f.sync_stack);
  }
  if (wants.empty()) return;
  NativeSymbolizer symbolizer;
  for (const TraceSummary& t : result.traces) {
    auto w = wants.find(t.rank);
    if (w != wants.end()) attach_rank(t.path, w->second, options.symbolize ? &symbolizer : nullptr);
  }
}

}  // namespace streamhaz::analysis
