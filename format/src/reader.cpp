// TraceReader: validates the preamble and header, then decodes chunk by chunk. Every length
// and value read from the file is checked before use, so foreign bytes give a TraceError,
// never a crash (the reader is fuzzed: tests/fuzz_reader.cpp).
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "chunk_compression.h"
#include "field_reader.h"
#include "layout.h"
#include "record_fields.h"
#include "stack_ids.h"
#include "streamhaz/trace/input_file.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::trace {
namespace {

std::string describe(const std::string& file, uint64_t offset, const std::string& what) {
  return file + ": at byte " + std::to_string(offset) + ": " + what;
}

// Room for `bytes` bytes at the start of `buffer`: grown when short, never shrunk.
uint8_t* room(std::vector<uint8_t>& buffer, size_t bytes) {
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// Header and meta JSON nest a few levels. Deeper nesting is refused: copying or printing a
// value is recursive in nlohmann::json, and a hostile header of a few hundred thousand '['
// would overflow the stack of every verb that copies the header (inspect did).
constexpr int kMaxJsonDepth = 64;

struct TooDeep {};

// Parses `text`; throws nlohmann::json::exception when it is not JSON, TooDeep when it
// nests deeper than kMaxJsonDepth.
nlohmann::json parse_shallow_json(const std::string& text) {
  return nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxJsonDepth) throw TooDeep{};
    return true;
  });
}

// The kinds next() does more with than decoding, one bit test per record for each set.
const detail::KindSet kStackKinds = detail::KindSet::where([](const Record& r) { return is_stack_record(r); });
const detail::KindSet kMetaOrEnd =
    detail::KindSet::where([](const Record& r) { return std::holds_alternative<Meta>(r) || std::holds_alternative<End>(r); });

const std::string kTooDeepText = "nests deeper than " + std::to_string(kMaxJsonDepth) + " levels";

// The header keys readers take as typed values, checked here once so that no reader meets a
// JSON type error without a file and offset: what is wrong, or null.
const char* header_type_problem(const nlohmann::json& h) {
  if (auto f = h.find("format"); f != h.end() && !f->is_string()) return "has a \"format\" that is not a string";
  if (auto v = h.find("version"); v != h.end() && !v->is_number_unsigned())
    return "has a \"version\" that is not a whole number";
  return nullptr;
}

}  // namespace

TraceError::TraceError(const std::string& file, uint64_t offset, const std::string& what)
    : std::runtime_error(describe(file, offset, what)), file_(file), offset_(offset), reason_(what) {}

TraceReader::TraceReader(std::string path)
    : path_(std::move(path)), stack_ids_(std::make_unique<detail::StackIdCheck>()) {
  const RegularFile regular = open_regular_file(path_);
  file_.reset(::fdopen(regular.fd, "rb"));
  if (!file_) {
    ::close(regular.fd);
    fail(0, std::string("cannot open: ") + std::strerror(errno));
  }
  file_bytes_ = regular.bytes;

  uint8_t pre[layout::kFilePreambleBytes];
  if (file_bytes_ < sizeof pre || std::fread(pre, 1, sizeof pre, file_.get()) != sizeof pre)
    fail(0, "expected a 16-byte streamhaz trace preamble, file has " + std::to_string(file_bytes_) + " bytes");
  if (std::memcmp(pre, layout::kFileMagic, sizeof layout::kFileMagic) != 0)
    fail(0, "expected magic SHZTRACE: not a streamhaz trace");
  uint32_t version = layout::get_u32(pre + 8);
  if (version == 0 || version > kFormatVersion)
    fail(8, "format version " + std::to_string(version) + " is not supported (this build reads up to " +
                std::to_string(kFormatVersion) + ")");
  uint32_t header_bytes = layout::get_u32(pre + 12);
  if (header_bytes > layout::kMaxHeaderBytes)
    fail(12, "header length " + std::to_string(header_bytes) + " exceeds the 1 MiB limit");
  if (file_bytes_ - sizeof pre < header_bytes)
    fail(sizeof pre, "file cut off inside its " + std::to_string(header_bytes) + "-byte JSON header");
  std::string text(header_bytes, '\0');
  if (std::fread(text.data(), 1, header_bytes, file_.get()) != header_bytes) fail(sizeof pre, "read error in header");
  try {
    header_ = parse_shallow_json(text);
  } catch (const nlohmann::json::exception& e) {
    fail(sizeof pre, std::string("header is not valid JSON: ") + e.what());
  } catch (const TooDeep&) {
    fail(sizeof pre, "header JSON " + kTooDeepText);
  }
  const auto format = header_.find("format");  // end() for anything but an object
  if (format == header_.end() || *format != "streamhaz-trace")
    fail(sizeof pre, "header is not a JSON object with \"format\": \"streamhaz-trace\"");
  if (const char* problem = header_type_problem(header_)) fail(sizeof pre, std::string("header ") + problem);
  offset_ = sizeof pre + header_bytes;
}

TraceReader::~TraceReader() = default;

int TraceReader::rank() const {
  auto it = header_.find("rank");
  return it != header_.end() && it->is_number_integer() ? it->get<int>() : -1;
}

int TraceReader::world_size() const {
  auto it = header_.find("world_size");
  return it != header_.end() && it->is_number_integer() ? it->get<int>() : 1;
}

void TraceReader::fail(uint64_t offset, const std::string& what) const { throw TraceError(path_, offset, what); }

std::string TraceReader::strings_cut_note() const {
  if (!strings_cut_) return {};
  return path_ + ": " + std::to_string(strings_cut_) + " string(s) longer than " +
         std::to_string(kMaxStringBytes >> 10) + " KiB (names, kernel parameter bytes) cut to their first " +
         std::to_string(kMaxStringBytes >> 10) + " KiB";
}

void TraceReader::mark_truncated(uint64_t offset, const std::string& what) {
  truncated_ = true;
  truncation_ = describe(path_, offset, what);
  done_ = true;
}

bool TraceReader::load_chunk() {
  if (offset_ == file_bytes_) {
    if (!saw_end_) mark_truncated(offset_, "trace ends without its end record (the process was killed?)");
    done_ = true;
    return false;
  }
  if (saw_end_) fail(offset_, "unexpected data after the end record");
  uint64_t left = file_bytes_ - offset_;
  if (left < layout::kChunkHeaderBytes) {
    mark_truncated(offset_, "file cut off inside a chunk header");
    return false;
  }
  uint8_t head[layout::kChunkHeaderBytes];
  if (std::fseek(file_.get(), static_cast<long>(offset_), SEEK_SET) != 0 || std::fread(head, 1, sizeof head, file_.get()) != sizeof head)
    fail(offset_, "read error");
  const uint32_t magic = layout::get_u32(head);
  const bool compressed = magic == layout::kCompressedChunkMagic;
  if (magic != layout::kChunkMagic && !compressed) fail(offset_, "expected chunk magic SHZC or SHZZ");
  uint32_t payload_bytes = layout::get_u32(head + 4);
  uint32_t records = layout::get_u32(head + 8);
  uint32_t crc = layout::get_u32(head + 12);
  if (payload_bytes > layout::kMaxChunkPayloadBytes)
    fail(offset_ + 4, "chunk payload length " + std::to_string(payload_bytes) + " exceeds the 64 MiB limit");
  if (records == 0 || (!compressed && records > payload_bytes))
    fail(offset_ + 8, "chunk record count " + std::to_string(records) + " does not fit its payload");
  if (left - sizeof head < payload_bytes) {
    if (const uint64_t whole = whole_payload_before(left - sizeof head, crc))
      fail(offset_ + 4, "chunk payload length " + std::to_string(payload_bytes) +
                            " runs past the end of the file, but the chunk's first " + std::to_string(whole) +
                            " payload bytes pass its checksum: the length field is corrupt");
    records_lost_ = records;
    mark_truncated(offset_, "file cut off inside a chunk (" + std::to_string(left - sizeof head) + " of " +
                                std::to_string(payload_bytes) + " payload bytes present)");
    return false;
  }
  uint8_t* stored = room(stored_, payload_bytes);
  if (std::fread(stored, 1, payload_bytes, file_.get()) != payload_bytes) fail(offset_ + sizeof head, "read error");
  if (static_cast<uint32_t>(crc32(0L, stored, payload_bytes)) != crc)
    fail(offset_ + sizeof head, "chunk checksum mismatch: the payload is corrupt");
  if (compressed) inflate_payload(records, payload_bytes);
  else cursor_ = {stored, payload_bytes};  // and the deltas start from 0, as in every chunk
  inflated_ = compressed;
  chunk_offset_ = offset_;
  payload_offset_ = offset_ + sizeof head;
  offset_ = payload_offset_ + payload_bytes;
  chunk_records_left_ = records;
  ++chunks_read_;
  return true;
}

// A chunk running past the end of the file was cut off (a killed process), unless the bytes
// there hold a whole payload with the chunk's checksum that ends at the file's end or at the
// next chunk's magic: then a bit flip in its length field made it look cut off. Returns that
// payload's length, or 0.
uint64_t TraceReader::whole_payload_before(uint64_t available, uint32_t crc) {
  uint8_t* stored = room(stored_, available);
  if (std::fread(stored, 1, available, file_.get()) != available)
    fail(offset_ + layout::kChunkHeaderBytes, "read error");
  const auto chunk_starts_at = [&](uint64_t p) {
    if (p + 4 > available) return false;
    const uint32_t magic = layout::get_u32(stored + p);
    return magic == layout::kChunkMagic || magic == layout::kCompressedChunkMagic;
  };
  uLong running = crc32(0L, Z_NULL, 0);
  uint64_t summed = 0;
  for (uint64_t end = 1; end <= available; ++end) {  // a chunk holds at least one record byte
    if (end != available && !chunk_starts_at(end)) continue;
    running = crc32(running, stored + summed, static_cast<uInt>(end - summed));
    summed = end;
    if (static_cast<uint32_t>(running) == crc) return end;
  }
  return 0;
}

// An error at byte `pos` of the payload: a file offset, or within an inflated chunk.
void TraceReader::fail_in_payload(uint64_t pos, const std::string& what) {
  if (!inflated_) fail(payload_offset_ + pos, what);
  fail(chunk_offset_, what + " (at byte " + std::to_string(pos) + " of the chunk's inflated payload)");
}

// A compressed chunk's stored bytes (u32 raw length, zlib stream) become the raw payload.
void TraceReader::inflate_payload(uint32_t records, uint32_t stored_bytes) {
  const uint64_t at = offset_ + layout::kChunkHeaderBytes;
  if (stored_bytes < 4) fail(at, "compressed chunk shorter than its length field");
  const uint32_t raw_bytes = layout::get_u32(stored_.data());
  if (raw_bytes > layout::kMaxChunkPayloadBytes)
    fail(at, "compressed chunk expands to " + std::to_string(raw_bytes) + " bytes, over the 64 MiB limit");
  if (records > raw_bytes) fail(offset_ + 8, "chunk record count " + std::to_string(records) + " does not fit its payload");
  uint8_t* raw = room(inflated_payload_, raw_bytes);
  if (!inflate_raw(stored_.data() + 4, stored_bytes - 4, raw, raw_bytes))
    fail(at, "compressed chunk does not inflate to its stated " + std::to_string(raw_bytes) + " bytes");
  cursor_ = {raw, raw_bytes};  // and the deltas start from 0, as in every chunk
}

bool TraceReader::next(Record& out) {
  if (done_) return false;
  if (chunk_records_left_ == 0 && !load_chunk()) return false;
  const size_t start = cursor_.pos;
  try {
    if (cursor_.pos >= cursor_.size) throw std::string("chunk ends before its last record");
    const uint8_t tag = cursor_.data[cursor_.pos++];
    if (tag == 0 || tag > kRecordKindCount) throw std::string("unknown record tag ") + std::to_string(tag);
    detail::decode_record(tag, out, cursor_, &strings_cut_);
    if (kStackKinds.has(out.index())) stack_ids_->check(out);
  } catch (const std::string& what) {
    fail_in_payload(start, what + " (record " + std::to_string(records_read_) + ")");
  }
  --chunk_records_left_;
  if (chunk_records_left_ == 0 && cursor_.pos != cursor_.size)
    fail_in_payload(cursor_.pos, std::to_string(cursor_.size - cursor_.pos) + " stray bytes after the chunk's last record");
  ++records_read_;
  if (kMetaOrEnd.has(out.index())) take_meta_or_end(out, start);
  return true;
}

// A meta record's keys join the header; the end record's count must be the file's.
void TraceReader::take_meta_or_end(const Record& out, size_t start) {
  if (const auto* meta = std::get_if<Meta>(&out)) {
    nlohmann::json extra;
    try {
      extra = parse_shallow_json(meta->json);
    } catch (const nlohmann::json::exception&) {
    } catch (const TooDeep&) {
      fail_in_payload(start, "meta record JSON " + kTooDeepText);
    }
    if (!extra.is_object()) fail_in_payload(start, "meta record is not a JSON object");
    if (const char* problem = header_type_problem(extra)) fail_in_payload(start, std::string("meta record ") + problem);
    header_.update(extra);
  } else if (std::holds_alternative<End>(out)) {
    if (std::get<End>(out).records != records_read_ - 1)
      fail_in_payload(start, "end record counts " + std::to_string(std::get<End>(out).records) +
                                        " records, file has " + std::to_string(records_read_ - 1));
    saw_end_ = true;
    // A tracer that stepped aside for another CUPTI client (docs/tracer.md) closed its trace
    // cleanly, but the run went on unobserved: as unchecked as a cut-off trace.
    // With `to_seq`, the tracer observed the run again from there on (its driver wrappers were
    // found bypassed): calls in between may be missing.
    if (const auto u = header_.find("unobserved"); u != header_.end() && u->is_object()) {
      truncated_ = unobserved_ = true;
      auto seq = [&](const char* key) {
        const auto v = u->find(key);
        return v != u->end() && v->is_number_unsigned() ? std::to_string(v->get<uint64_t>()) : std::string("?");
      };
      const auto why = u->find("reason");
      const std::string reason = why != u->end() && why->is_string() ? why->get<std::string>() : "no reason given";
      if (u->contains("to_seq"))
        truncation_ = path_ + ": calls between #" + seq("from_seq") + " and #" + seq("to_seq") +
                      " may be missing from the trace (" + reason + "); that part of the run was not checked completely";
      else
        truncation_ = path_ + ": the tracer stopped observing the run at call #" + seq("from_seq") + " (" + reason +
                      "); the rest of the run is not in the trace";
    }
  }
}

}  // namespace streamhaz::trace
