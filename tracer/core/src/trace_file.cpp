#include "streamhaz/tracer/trace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "streamhaz/trace/writer.h"

namespace streamhaz::tracer {

TraceFile::TraceFile(std::string dir, std::string name, std::string fallback_name)
    : dir_(std::move(dir)), name_(std::move(name)), fallback_name_(std::move(fallback_name)) {}

TraceFile::~TraceFile() { close(); }

void TraceFile::fail(const std::string& what) {
  if (!failed_) std::fprintf(stderr, "streamhaz: %s; tracing stops, the program continues\n", what.c_str());
  failed_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TraceFile::open(const std::function<nlohmann::json()>& make_header) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);  // several ranks may race here: harmless
  for (const std::string& name : {name_, fallback_name_}) {
    path_ = (std::filesystem::path(dir_) / name).string();
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ >= 0 || errno != EEXIST) break;
  }
  if (fd_ < 0) {
    fail("cannot create trace file " + path_ + ": " + std::strerror(errno));
    return false;
  }
  std::string header;
  try {
    header = trace::encode_file_header(make_header());
  } catch (const std::exception& e) {
    fail(std::string("cannot write the trace header: ") + e.what());
    return false;
  }
  return write_all(header);
}

bool TraceFile::write(std::string_view bytes, const std::function<nlohmann::json()>& make_header) {
  if (failed_ || closed_) return false;
  if (bytes.empty()) return true;
  if (fd_ < 0 && !open(make_header)) return false;
  return write_all(bytes);
}

bool TraceFile::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write trace file " + path_ + ": " + std::strerror(errno));
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void TraceFile::close() {
  closed_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace streamhaz::tracer
