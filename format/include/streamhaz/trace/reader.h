// Reading a trace file: header, then records chunk by chunk. A file cut off anywhere after
// the header reads up to its last whole chunk and reports itself truncated; anything else
// that does not decode throws TraceError naming the file, the byte offset and what was
// expected there.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "streamhaz/trace/records.h"

namespace streamhaz::trace {

namespace detail {
class StackIdCheck;

// Where decoding stands in the current chunk: its payload, the next byte, and the values the
// delta-coded fields continue from (field_reader.h decodes from and into it).
struct ChunkCursor {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  uint64_t seq = 0, ptr = 0, timing_seq = 0, start_ns = 0;
};
}  // namespace detail

class TraceError : public std::runtime_error {
 public:
  TraceError(const std::string& file, uint64_t offset, const std::string& what);
  const std::string& file() const { return file_; }
  uint64_t offset() const { return offset_; }
  const std::string& reason() const { return reason_; }  // what, without file and offset

 private:
  std::string file_;
  uint64_t offset_;
  std::string reason_;
};

// Names (string records) and kernel parameter bytes longer than this keep only their first
// kMaxStringBytes bytes: no real name comes near it, and CUDA passes at most 32 KiB of
// parameters to a kernel.
inline constexpr size_t kMaxStringBytes = 64 * 1024;

class TraceReader {
 public:
  explicit TraceReader(std::string path);  // reads the header; throws TraceError
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  // The JSON header, with every Meta record read so far merged in.
  const nlohmann::json& header() const { return header_; }
  int rank() const;        // header "rank", -1 if absent
  int world_size() const;  // header "world_size", 1 if absent

  // Reads the next record; false at the end of the readable data. Throws TraceError.
  bool next(Record& out);

  bool truncated() const { return truncated_; }
  const std::string& truncation() const { return truncation_; }  // why, where
  // Truncated because the tracer stopped observing (it stepped aside for another CUPTI client),
  // not cut off: nothing of what it recorded is lost.
  bool unobserved() const { return unobserved_; }
  // Records known to be lost: those a cut-off chunk's header counts. A lower bound: what the
  // process did after its last flush left no trace at all.
  uint64_t records_lost() const { return records_lost_; }
  bool clean_end() const { return saw_end_; }
  uint64_t records_read() const { return records_read_; }
  // Strings cut to kMaxStringBytes so far, and the one sentence that says so ("" when none).
  uint64_t strings_cut() const { return strings_cut_; }
  std::string strings_cut_note() const;
  uint64_t chunks_read() const { return chunks_read_; }
  uint64_t file_bytes() const { return file_bytes_; }
  const std::string& path() const { return path_; }

 private:
  bool load_chunk();
  void take_meta_or_end(const Record& out, size_t start);
  uint64_t whole_payload_before(uint64_t available, uint32_t crc);
  void inflate_payload(uint32_t records, uint32_t stored_bytes);
  [[noreturn]] void fail_in_payload(uint64_t pos, const std::string& what);
  [[noreturn]] void fail(uint64_t offset, const std::string& what) const;
  void mark_truncated(uint64_t offset, const std::string& what);

  std::string path_;
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  // Owned so that a constructor that throws (bad header) still closes the file.
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::unique_ptr<detail::StackIdCheck> stack_ids_;  // call-stack ids defined before use
  uint64_t file_bytes_ = 0;
  uint64_t offset_ = 0;  // of the next chunk
  nlohmann::json header_;

  // A chunk's bytes as stored in the file, and a compressed chunk's inflated: grown as needed,
  // never shrunk, so that no chunk pays for zero-filling them.
  std::vector<uint8_t> stored_;
  std::vector<uint8_t> inflated_payload_;
  detail::ChunkCursor cursor_;    // the payload being decoded (in one of the two) and the place in it
  uint64_t payload_offset_ = 0;  // file offset of the payload's first byte (of a raw chunk)
  uint64_t chunk_offset_ = 0;    // file offset of the chunk's header
  bool inflated_ = false;        // the payload was inflated from a compressed chunk
  uint32_t chunk_records_left_ = 0;

  bool done_ = false;
  bool truncated_ = false;
  bool saw_end_ = false;
  std::string truncation_;
  bool unobserved_ = false;
  uint64_t records_read_ = 0;
  uint64_t strings_cut_ = 0;
  uint64_t records_lost_ = 0;
  uint64_t chunks_read_ = 0;
};

// Expands the command line's TRACE arguments: a file stays itself, a folder gives its
// *.shz files in name order. Throws TraceError for a missing path or an empty folder.
std::vector<std::string> expand_trace_paths(const std::vector<std::string>& args);

}  // namespace streamhaz::trace
