// ChunkEncoder and the file preamble.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <variant>

#include "layout.h"
#include "record_fields.h"
#include "streamhaz/trace/writer.h"

namespace streamhaz::trace {
namespace {

using detail::DeltaState;
using detail::zigzag;

// LEB128 at `out`, which has room for 10 bytes; returns the byte after it.
inline char* put_varint(char* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

constexpr size_t kMaxVarintBytes = 10;

// The variant index of record kind T, at compile time (a function-local static would cost its
// guard's load on every call).
template <class T, class V> struct KindIndex;
template <class T, class... Ts> struct KindIndex<T, std::variant<Ts...>> {
  static constexpr size_t value = [] {
    size_t i = 0;
    (void)((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
    return i;
  }();
};
constexpr size_t kAccessIndex = KindIndex<Access, Record>::value;

// The most bytes a record's fields take: the payload grows once per record, and the fields are
// then written through a pointer (an append per field, each with its capacity check, was most of
// the cost of writing a record, and of the code a launch runs).
struct FieldBound {
  size_t bytes = 0;
  void u64(const char*, uint64_t) { bytes += kMaxVarintBytes; }
  void u32(const char*, uint32_t) { bytes += kMaxVarintBytes; }
  void u8(const char*, uint8_t) { bytes += kMaxVarintBytes; }
  void i32(const char*, int32_t) { bytes += kMaxVarintBytes; }
  void flag(const char*, bool) { bytes += kMaxVarintBytes; }
  template <class E> void e(const char*, E, uint8_t) { bytes += kMaxVarintBytes; }
  template <class E> void e_min1(const char*, E, uint8_t) { bytes += kMaxVarintBytes; }
  void str(const char*, const std::string& s) { bytes += kMaxVarintBytes + s.size(); }
  void seq(const char*, uint64_t) { bytes += kMaxVarintBytes; }
  void ptr(const char*, uint64_t) { bytes += kMaxVarintBytes; }
  void timing_seq(const char*, uint64_t) { bytes += kMaxVarintBytes; }
  void start_ns(const char*, uint64_t) { bytes += kMaxVarintBytes; }
  void end_ns(const char*, uint64_t, uint64_t) { bytes += kMaxVarintBytes; }
};

// The codec the field lists are walked with when writing, into room FieldBound measured.
struct FieldWriter {
  char* out;
  DeltaState& d;

  void u64(const char*, uint64_t v) { out = put_varint(out, v); }
  void u32(const char*, uint32_t v) { out = put_varint(out, v); }
  void u8(const char*, uint8_t v) { out = put_varint(out, v); }
  void i32(const char*, int32_t v) { out = put_varint(out, zigzag(v)); }
  void flag(const char*, bool v) { out = put_varint(out, v ? 1 : 0); }
  template <class E> void e(const char*, E v, uint8_t) { out = put_varint(out, static_cast<uint64_t>(v)); }
  template <class E> void e_min1(const char*, E v, uint8_t) { out = put_varint(out, static_cast<uint64_t>(v)); }
  void str(const char*, const std::string& s) {
    out = put_varint(out, s.size());
    if (!s.empty()) std::memcpy(out, s.data(), s.size());
    out += s.size();
  }
  void seq(const char*, uint64_t v) { delta(d.seq, v); }
  void ptr(const char*, uint64_t v) { delta(d.ptr, v); }
  void timing_seq(const char*, uint64_t v) { delta(d.timing_seq, v); }
  void start_ns(const char*, uint64_t v) { delta(d.start_ns, v); }
  void end_ns(const char*, uint64_t end, uint64_t start) { out = put_varint(out, zigzag(static_cast<int64_t>(end - start))); }

 private:
  void delta(uint64_t& last, uint64_t v) {
    out = put_varint(out, zigzag(static_cast<int64_t>(v - last)));
    last = v;
  }
};

}  // namespace

char* ChunkEncoder::Bytes::extend(size_t n) {
  if (capacity_ - size_ < n) {
    const size_t capacity = std::max(2 * capacity_, size_ + n);
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_) std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity;
  }
  char* at = data_.get() + size_;
  size_ += n;
  return at;
}

void ChunkEncoder::add(const Record& r) {
  DeltaState d{last_seq_, last_ptr_, last_timing_seq_, last_start_ns_};
  // The field lists take non-const references so the decoder can fill them; writing only
  // reads, so the const_cast never leads to a modification.
  std::visit(
      [&](const auto& rec) {
        auto& fields = const_cast<std::decay_t<decltype(rec)>&>(rec);
        FieldBound bound;
        detail::visit_fields(bound, fields);
        char* out = payload_.extend(1 + bound.bytes);
        *out++ = static_cast<char>(r.index() + 1);
        FieldWriter w{out, d};
        detail::visit_fields(w, fields);
        payload_.shrink_to(w.out);
      },
      r);
  last_seq_ = d.seq;
  last_ptr_ = d.ptr;
  last_timing_seq_ = d.timing_seq;
  last_start_ns_ = d.start_ns;
  ++records_;
}

void ChunkEncoder::add_pointer_accesses(uint64_t op_seq, std::span<const uint64_t> ptrs,
                                        std::span<const AccessMode> modes, FootprintTier tier) {
  constexpr char tag = static_cast<char>(kAccessIndex + 1);
  // The field order of visit_fields(Access): op_seq (timing_seq delta), ptr (delta), bytes,
  // mode, tier. At most 1 + 10 + 10 + 1 + 1 + 1 bytes a record.
  constexpr size_t kMaxRecordBytes = 24;
  char* out = payload_.extend(ptrs.size() * kMaxRecordBytes);
  for (size_t i = 0; i < ptrs.size(); ++i) {
    *out++ = tag;
    out = put_varint(out, zigzag(static_cast<int64_t>(op_seq - last_timing_seq_)));
    last_timing_seq_ = op_seq;
    out = put_varint(out, zigzag(static_cast<int64_t>(ptrs[i] - last_ptr_)));
    last_ptr_ = ptrs[i];
    out = put_varint(out, 0);
    out = put_varint(out, static_cast<uint64_t>(modes[i]));
    out = put_varint(out, static_cast<uint64_t>(tier));
  }
  payload_.shrink_to(out);
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
  if (payload_.size()) out.append(payload_.data(), payload_.size());
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
