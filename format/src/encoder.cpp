// ChunkEncoder and the file preamble.
#include <zlib.h>

#include "layout.h"
#include "record_fields.h"
#include "streamhaz/trace/writer.h"

namespace streamhaz::trace {
namespace {

using detail::DeltaState;
using detail::zigzag;

// Built on the stack and appended once: a push_back per byte (a capacity check and a
// terminator each) was the largest part of writing a record.
void put_varint(std::string& out, uint64_t v) {
  char bytes[10];
  size_t n = 0;
  while (v >= 0x80) {
    bytes[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  bytes[n++] = static_cast<char>(v);
  out.append(bytes, n);
}

// The codec the field lists are walked with when writing.
struct FieldWriter {
  std::string& out;
  DeltaState& d;

  void u64(const char*, uint64_t v) { put_varint(out, v); }
  void u32(const char*, uint32_t v) { put_varint(out, v); }
  void u8(const char*, uint8_t v) { put_varint(out, v); }
  void i32(const char*, int32_t v) { put_varint(out, zigzag(v)); }
  void flag(const char*, bool v) { put_varint(out, v ? 1 : 0); }
  template <class E> void e(const char*, E v, uint8_t) { put_varint(out, static_cast<uint64_t>(v)); }
  template <class E> void e_min1(const char*, E v, uint8_t) { put_varint(out, static_cast<uint64_t>(v)); }
  void str(const char*, const std::string& s) {
    put_varint(out, s.size());
    out.append(s);
  }
  void seq(const char*, uint64_t v) { delta(d.seq, v); }
  void ptr(const char*, uint64_t v) { delta(d.ptr, v); }
  void timing_seq(const char*, uint64_t v) { delta(d.timing_seq, v); }
  void start_ns(const char*, uint64_t v) { delta(d.start_ns, v); }
  void end_ns(const char*, uint64_t end, uint64_t start) { put_varint(out, zigzag(static_cast<int64_t>(end - start))); }

 private:
  void delta(uint64_t& last, uint64_t v) {
    put_varint(out, zigzag(static_cast<int64_t>(v - last)));
    last = v;
  }
};

}  // namespace

void ChunkEncoder::add(const Record& r) {
  payload_.push_back(static_cast<char>(r.index() + 1));
  DeltaState d{last_seq_, last_ptr_, last_timing_seq_, last_start_ns_};
  FieldWriter w{payload_, d};
  // The field lists take non-const references so the decoder can fill them; writing only
  // reads, so the const_cast never leads to a modification.
  std::visit([&](const auto& rec) { detail::visit_fields(w, const_cast<std::decay_t<decltype(rec)>&>(rec)); }, r);
  last_seq_ = d.seq;
  last_ptr_ = d.ptr;
  last_timing_seq_ = d.timing_seq;
  last_start_ns_ = d.start_ns;
  ++records_;
}

void ChunkEncoder::add_pointer_accesses(uint64_t op_seq, std::span<const uint64_t> ptrs,
                                        std::span<const AccessMode> modes, FootprintTier tier) {
  static const char tag = static_cast<char>(Record{Access{}}.index() + 1);
  // The field order of visit_fields(Access): op_seq (timing_seq delta), ptr (delta), bytes,
  // mode, tier. At most 1 + 10 + 10 + 1 + 1 + 1 bytes a record.
  constexpr size_t kMaxRecordBytes = 24;
  const size_t at = payload_.size();
  payload_.resize(at + ptrs.size() * kMaxRecordBytes);
  char* out = payload_.data() + at;
  auto varint = [&out](uint64_t v) {
    while (v >= 0x80) {
      *out++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *out++ = static_cast<char>(v);
  };
  for (size_t i = 0; i < ptrs.size(); ++i) {
    *out++ = tag;
    varint(zigzag(static_cast<int64_t>(op_seq - last_timing_seq_)));
    last_timing_seq_ = op_seq;
    varint(zigzag(static_cast<int64_t>(ptrs[i] - last_ptr_)));
    last_ptr_ = ptrs[i];
    varint(0);
    varint(static_cast<uint64_t>(modes[i]));
    varint(static_cast<uint64_t>(tier));
  }
  payload_.resize(static_cast<size_t>(out - payload_.data()));
  records_ += static_cast<uint32_t>(ptrs.size());
}

void ChunkEncoder::finish_into(std::string& out) {
  char head[layout::kChunkHeaderBytes];
  layout::put_u32(head, layout::kChunkMagic);
  layout::put_u32(head + 4, static_cast<uint32_t>(payload_.size()));
  layout::put_u32(head + 8, records_);
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(payload_.data()), static_cast<uInt>(payload_.size()));
  layout::put_u32(head + 12, static_cast<uint32_t>(crc));
  out.append(head, sizeof head);
  out.append(payload_);
  payload_.clear();
  records_ = 0;
  last_seq_ = last_ptr_ = last_timing_seq_ = last_start_ns_ = 0;
}

std::string encode_file_header(const nlohmann::json& header) {
  std::string text = header.dump();
  std::string out(layout::kFileMagic, sizeof layout::kFileMagic);
  char words[8];
  layout::put_u32(words, kFormatVersion);
  layout::put_u32(words + 4, static_cast<uint32_t>(text.size()));
  out.append(words, sizeof words);
  out.append(text);
  return out;
}

}  // namespace streamhaz::trace
