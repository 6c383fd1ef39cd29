// Writing a trace: ChunkEncoder turns records into one chunk's bytes; TraceFileWriter puts
// the header and chunks into a file. The tracer may drive ChunkEncoder itself (for its own
// flush policy), tests and benchmarks use TraceFileWriter.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "streamhaz/trace/records.h"

namespace streamhaz::trace {

// Encodes records into the payload of one chunk. Delta state resets with each chunk, so
// every chunk decodes on its own.
class ChunkEncoder {
 public:
  // `hot`: grouped with the tracer's per-call code (tracer/core/.../hot_path.h).
  [[gnu::hot]] void add(const Record& r);
  // The same bytes as add() of one Access{op_seq, ptrs[i], 0, modes[i], tier} per pointer, written
  // without a record's generic walk: a foreach launch makes hundreds of them.
  [[gnu::hot]] void add_pointer_accesses(uint64_t op_seq, std::span<const uint64_t> ptrs,
                                        std::span<const AccessMode> modes, FootprintTier tier);
  uint32_t record_count() const { return records_; }
  size_t payload_bytes() const { return payload_.size(); }
  bool empty() const { return records_ == 0; }
  // Appends the finished chunk (header + payload) to `out` and starts a new chunk.
  void finish_into(std::string& out);

 private:
  // The payload's bytes, grown without the zero fill of std::string::resize: a record reserves
  // the most it can take, is written through a pointer, and gives back what it did not use.
  class Bytes {
   public:
    Bytes() = default;
    Bytes(Bytes&& other) noexcept
        : data_(std::move(other.data_)), size_(std::exchange(other.size_, 0)), capacity_(std::exchange(other.capacity_, 0)) {}
    Bytes& operator=(Bytes&& other) noexcept {
      data_ = std::move(other.data_);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
      return *this;
    }
    [[gnu::hot]] char* extend(size_t n);  // n more bytes at the end, uninitialised; the pointer to them
    void shrink_to(const char* end) { size_ = static_cast<size_t>(end - data_.get()); }
    const char* data() const { return data_.get(); }
    size_t size() const { return size_; }
    void clear() { size_ = 0; }

   private:
    std::unique_ptr<char[]> data_;
    size_t size_ = 0, capacity_ = 0;
  };
  Bytes payload_;
  uint32_t records_ = 0;
  uint64_t last_seq_ = 0;
  uint64_t last_ptr_ = 0;
  uint64_t last_timing_seq_ = 0;
  uint64_t last_start_ns_ = 0;
};

// `chunks` (whole chunks as finish_into wrote them) with each payload zlib-compressed into a
// compressed chunk, appended to `out`; a chunk that would not shrink is copied as it is. Done
// apart from encoding so that the tracer compresses outside its recording lock.
void compress_chunks(std::string_view chunks, std::string& out);

// The first bytes of a trace file: magic, version, header length, then the JSON header.
std::string encode_file_header(const nlohmann::json& header);

class TraceFileWriter {
 public:
  struct Options {
    size_t chunk_bytes = 64 * 1024;  // a chunk is written once its payload reaches this
    bool overwrite = false;          // refuse to replace an existing file unless asked
  };
  // Creates `path` and writes the header. Throws std::runtime_error (with the path and errno
  // text) when the file exists and overwrite is off, or cannot be written.
  TraceFileWriter(const std::string& path, const nlohmann::json& header, Options options);
  TraceFileWriter(const std::string& path, const nlohmann::json& header)
      : TraceFileWriter(path, header, Options{}) {}
  ~TraceFileWriter();  // closes cleanly (End record) unless already closed
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  void add(const Record& r);
  void flush();  // writes the current chunk, even if small
  void close();  // writes the End record and closes the file
  // Stops without the End record, as a killed process would: for tests of truncation.
  void abandon();
  uint64_t records() const { return records_; }
  uint64_t bytes_written() const { return bytes_written_; }
  const std::string& path() const { return path_; }

 private:
  void write_all(std::string_view bytes);
  std::string path_;
  Options options_;
  int fd_ = -1;
  ChunkEncoder chunk_;
  std::string raw_, staging_;
  uint64_t records_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace streamhaz::trace
