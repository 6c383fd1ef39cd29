// TraceFileWriter: header and chunks into a file, with POSIX I/O so that a file descriptor
// is all the state a crash handler would need.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "streamhaz/trace/writer.h"

namespace streamhaz::trace {

TraceFileWriter::TraceFileWriter(const std::string& path, const nlohmann::json& header, Options options)
    : path_(path), options_(options) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options.overwrite ? O_TRUNC : O_EXCL);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) {
    throw std::runtime_error(path + ": cannot create trace file: " + std::strerror(errno) +
                             (errno == EEXIST ? " (refusing to overwrite)" : ""));
  }
  write_all(encode_file_header(header));
}

TraceFileWriter::~TraceFileWriter() {
  if (fd_ < 0) return;
  try {
    close();
  } catch (...) {
    // A destructor must not throw; the file stays readable up to its last whole chunk.
  }
}

void TraceFileWriter::add(const Record& r) {
  chunk_.add(r);
  ++records_;
  if (chunk_.payload_bytes() >= options_.chunk_bytes) flush();
}

void TraceFileWriter::flush() {
  if (chunk_.empty()) return;
  raw_.clear();
  chunk_.finish_into(raw_);
  staging_.clear();
  compress_chunks(raw_, staging_);
  write_all(staging_);
}

void TraceFileWriter::close() {
  if (fd_ < 0) return;
  chunk_.add(End{records_});
  flush();
  ::close(fd_);
  fd_ = -1;
}

void TraceFileWriter::abandon() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
}

void TraceFileWriter::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    bytes_written_ += static_cast<uint64_t>(n);
  }
}

}  // namespace streamhaz::trace
