// The codec the field lists (record_fields.h) are walked with when reading, and the decoding
// of one record into a Record. Every value is checked before use; a bad one throws a plain
// string, which the reader turns into a TraceError with the file offset.
//
// This is the loop every record of every check goes through, so the common case is kept
// short: one-byte varints inline, the read position in a local, the record kind found by
// index rather than by trying each kind.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "layout.h"
#include "record_fields.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::trace::detail {

// Error paths (field_reader.cpp), out of line so that the checks around them stay small
// enough to inline.
[[noreturn, gnu::cold]] void throw_message(const char* what);
[[noreturn, gnu::cold]] void throw_out_of_range(const char* what, uint64_t v);  // "<what> value <v> out of range"
[[noreturn, gnu::cold]] void throw_not_a_flag(uint64_t v);
[[noreturn, gnu::cold]] void throw_string_too_long(uint64_t bytes, bool past_chunk_end);

// A varint of two bytes or more (or none left) from `pos`: its value and the byte after it.
struct VarintRead {
  uint64_t value;
  size_t next;
};
VarintRead read_long_varint(const uint8_t* data, size_t size, size_t pos);

// Decodes one record's fields from a copy of the cursor, written back at the end: a local
// whose address nothing takes stays in registers, where the cursor's own members would be
// reloaded after every field stored into the record (they may alias it). `strings_cut` counts
// the names cut to kMaxStringBytes.
class FieldReader {
 public:
  FieldReader(const ChunkCursor& c, uint64_t* strings_cut)
      : data_(c.data), size_(c.size), pos_(c.pos), d_{c.seq, c.ptr, c.timing_seq, c.start_ns}, strings_cut_(strings_cut) {}
  void store(ChunkCursor& c) const {
    c.pos = pos_;
    c.seq = d_.seq;
    c.ptr = d_.ptr;
    c.timing_seq = d_.timing_seq;
    c.start_ns = d_.start_ns;
  }

  // Most fields fit one byte; pointers, sizes and times mostly two or three.
  [[gnu::always_inline]] uint64_t varint() {
    if (size_ - pos_ >= 3) {
      const uint8_t* b = data_ + pos_;
      if (b[0] < 0x80) {
        pos_ += 1;
        return b[0];
      }
      if (b[1] < 0x80) {
        pos_ += 2;
        return (b[0] & 0x7fu) | uint64_t{b[1]} << 7;
      }
      if (b[2] < 0x80) {
        pos_ += 3;
        return (b[0] & 0x7fu) | uint64_t{b[1] & 0x7fu} << 7 | uint64_t{b[2]} << 14;
      }
    }
    const VarintRead v = read_long_varint(data_, size_, pos_);
    pos_ = v.next;
    return v.value;
  }
  [[gnu::always_inline]] void u64(const char*, uint64_t& v) { v = varint(); }
  [[gnu::always_inline]] void u32(const char*, uint32_t& v) { v = bounded<uint32_t>(varint(), "32-bit field"); }
  [[gnu::always_inline]] void u8(const char*, uint8_t& v) { v = bounded<uint8_t>(varint(), "8-bit field"); }
  [[gnu::always_inline]] void i32(const char*, int32_t& v) {
    const int64_t x = unzigzag(varint());
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
      throw_message("signed 32-bit field out of range");
    v = static_cast<int32_t>(x);
  }
  [[gnu::always_inline]] void flag(const char*, bool& v) {
    const uint64_t x = varint();
    if (x > 1) throw_not_a_flag(x);
    v = x == 1;
  }
  template <class E> [[gnu::always_inline]] void e(const char*, E& v, uint8_t count) {
    const uint64_t x = varint();
    if (x >= count) throw_out_of_range("enum", x);
    v = static_cast<E>(x);
  }
  template <class E> [[gnu::always_inline]] void e_min1(const char*, E& v, uint8_t count) {
    const uint64_t x = varint();
    if (x == 0 || x >= count) throw_out_of_range("enum", x);
    v = static_cast<E>(x);
  }
  // Names and parameter bytes keep their first kMaxStringBytes (counted), so that a trace of
  // a few MB of compressed 60 MiB names cannot make GBs of them; a meta record's JSON, merged
  // into the header, is refused past the header's own limit.
  void str(const char* field, std::string& s) {
    const uint64_t n = varint();
    if (n > size_ - pos_) throw_string_too_long(n, true);
    const bool meta = std::strcmp(field, "json") == 0;
    if (meta && n > layout::kMaxHeaderBytes) throw_string_too_long(n, false);
    const size_t kept = meta ? static_cast<size_t>(n) : static_cast<size_t>(std::min<uint64_t>(n, kMaxStringBytes));
    *strings_cut_ += kept < n;
    s.assign(reinterpret_cast<const char*>(data_ + pos_), kept);
    pos_ += static_cast<size_t>(n);
  }
  [[gnu::always_inline]] void seq(const char*, uint64_t& v) { v = delta(d_.seq); }
  [[gnu::always_inline]] void ptr(const char*, uint64_t& v) { v = delta(d_.ptr); }
  [[gnu::always_inline]] void timing_seq(const char*, uint64_t& v) { v = delta(d_.timing_seq); }
  [[gnu::always_inline]] void start_ns(const char*, uint64_t& v) { v = delta(d_.start_ns); }
  [[gnu::always_inline]] void end_ns(const char*, uint64_t& end, uint64_t start) { end = start + static_cast<uint64_t>(unzigzag(varint())); }

 private:
  template <class T> [[gnu::always_inline]] T bounded(uint64_t v, const char* what) {
    if (v > std::numeric_limits<T>::max()) throw_out_of_range(what, v);
    return static_cast<T>(v);
  }
  [[gnu::always_inline]] uint64_t delta(uint64_t& last) {
    last += static_cast<uint64_t>(unzigzag(varint()));
    return last;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_;
  DeltaState d_;
  uint64_t* strings_cut_;
};

template <size_t I> void decode_as(Record& out, ChunkCursor& cursor, uint64_t* strings_cut) {
  using Kind = std::variant_alternative_t<I, Record>;
  auto* held = std::get_if<I>(&out);
  // A record of the kind the buffer holds (runs of accesses, timings): reset in place.
  if (held && std::is_trivially_copyable_v<Kind>) *held = Kind{};
  else held = &out.template emplace<I>();
  FieldReader r(cursor, strings_cut);
  visit_fields(r, *held);
  r.store(cursor);
}

using Decoder = void (*)(Record&, ChunkCursor&, uint64_t*);
template <size_t... I> constexpr std::array<Decoder, sizeof...(I)> decoders(std::index_sequence<I...>) {
  return {&decode_as<I>...};
}
inline constexpr auto kDecoders = decoders(std::make_index_sequence<std::variant_size_v<Record>>{});

// A set of record kinds, by variant index, made from a predicate on records of each kind.
class KindSet {
 public:
  template <class Pred> static KindSet where(Pred&& pred) {
    return where(pred, std::make_index_sequence<std::variant_size_v<Record>>{});
  }
  bool has(size_t index) const { return (bits_ >> index) & 1; }

 private:
  static_assert(std::variant_size_v<Record> <= 64);
  template <class Pred, size_t... I> static KindSet where(Pred& pred, std::index_sequence<I...>) {
    KindSet s;
    s.bits_ = ((pred(Record(std::in_place_index<I>)) ? uint64_t{1} << I : 0) | ...);
    return s;
  }
  uint64_t bits_ = 0;
};

// Decodes the fields of the record whose tag is `tag` (its variant index + 1, checked by the caller).
inline void decode_record(uint8_t tag, Record& out, ChunkCursor& cursor, uint64_t* strings_cut) {
  kDecoders[tag - 1](out, cursor, strings_cut);
}

}  // namespace streamhaz::trace::detail
