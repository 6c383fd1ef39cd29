// The per-process trace file: created on the first write (so a process that records nothing
// leaves no file), header first, then whole chunks. Plain POSIX I/O so that a signal handler
// can write through it.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace streamhaz::tracer {

class TraceFile {
 public:
  // `names`: the preferred file name, then the one to use if that exists already.
  TraceFile(std::string dir, std::string name, std::string fallback_name);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  // Writes `bytes` (whole chunks), creating the file with `make_header()` first. After a
  // failure it warns once on stderr and drops everything that follows; returns false then.
  bool write(std::string_view bytes, const std::function<nlohmann::json()>& make_header);
  void close();
  bool opened() const { return fd_ >= 0; }
  bool failed() const { return failed_; }
  const std::string& path() const { return path_; }

 private:
  bool open(const std::function<nlohmann::json()>& make_header);
  bool write_all(std::string_view bytes);
  void fail(const std::string& what);

  std::string dir_, name_, fallback_name_, path_;
  int fd_ = -1;
  bool failed_ = false;
  bool closed_ = false;
};

}  // namespace streamhaz::tracer
