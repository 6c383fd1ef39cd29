#include "trace_stats.h"

#include <set>
#include <unordered_map>

#include "streamhaz/trace/reader.h"

namespace streamhaz::cli {

using namespace streamhaz::trace;

std::string operation_kind(const Record& r) {
  if (const auto* m = std::get_if<Memcpy>(&r)) return std::string("memcpy ") + to_string(m->kind);
  if (const auto* n = std::get_if<Nccl>(&r)) return to_string(n->kind);
  return record_name(r);
}

TraceStats collect_trace_stats(const std::string& path) {
  TraceReader reader(path);
  TraceStats s;
  s.path = path;
  std::unordered_map<StringId, std::string> strings;
  std::set<uint64_t> kernels_with_access;
  std::set<uint64_t> timed;
  std::vector<uint64_t> kernel_seqs;
  Record r;
  while (reader.next(r)) {
    ++s.by_kind[r.index()];
    std::visit(
        [&](const auto& rec) {
          using T = std::decay_t<decltype(rec)>;
          if constexpr (std::is_same_v<T, StringDef>) {
            strings[rec.id] = rec.text;
          } else if constexpr (std::is_same_v<T, StreamCreate>) {
            auto& st = s.streams[rec.stream];
            st.device = rec.device;
            st.flags = rec.flags;
            st.priority = rec.priority;
          } else if constexpr (std::is_same_v<T, StreamName>) {
            s.streams[rec.stream].name = strings[rec.name];
          } else if constexpr (std::is_same_v<T, EventWait>) {
            ++s.streams[rec.stream].waits;
          } else if constexpr (std::is_same_v<T, EventRecord>) {
            ++s.streams[rec.stream].records;
          } else if constexpr (std::is_same_v<T, StreamSync> || std::is_same_v<T, StreamQuery>) {
            ++s.streams[rec.stream].syncs;
          } else if constexpr (std::is_same_v<T, Access>) {
            kernels_with_access.insert(rec.op_seq);
          } else if constexpr (std::is_same_v<T, Timing>) {
            timed.insert(rec.op_seq);
          } else if constexpr (std::is_same_v<T, FrameDef>) {
            s.native_frames += rec.kind == FrameKind::Native;
          } else if constexpr (std::is_same_v<T, Alloc>) {
            ++s.allocations;
            s.allocated_bytes += rec.bytes;
          }
        },
        r);
    if (const OpCommon* op = op_common(r)) {
      ++s.operations;
      ++s.streams[op->stream].operations[operation_kind(r)];
      if (std::holds_alternative<Kernel>(r)) kernel_seqs.push_back(op->seq);
    }
  }
  for (uint64_t seq : kernel_seqs) s.kernels_without_footprint += !kernels_with_access.count(seq);
  s.timed_operations = timed.size();
  s.header = reader.header();
  s.file_bytes = reader.file_bytes();
  s.chunks = reader.chunks_read();
  s.records = reader.records_read();
  s.truncated = reader.truncated();
  s.truncation = reader.truncation();
  s.strings_cut = reader.strings_cut();
  s.strings_cut_note = reader.strings_cut_note();
  return s;
}

}  // namespace streamhaz::cli
