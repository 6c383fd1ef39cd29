// One process's tracing session: the recorder, its chunk buffer and the trace file, with the
// flush policy: what is buffered goes to the file from a background thread every
// `flush_period`, everything at close; a signal handler can flush what
// is buffered without blocking. API callbacks never do file I/O.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "streamhaz/tracer/chunk_buffer.h"
#include "streamhaz/tracer/process_identity.h"
#include "streamhaz/tracer/recorder.h"
#include "streamhaz/tracer/trace_file.h"

namespace streamhaz::tracer {

struct SessionOptions {
  std::string out_dir = ".";
  size_t chunk_bytes = 64 * 1024;
  std::chrono::milliseconds flush_period{1000};  // 0: no background flusher
};

using HeaderFn = std::function<nlohmann::json()>;

class Session {
 public:
  Session(SessionOptions options, const ProcessIdentity& who, HeaderFn make_header,
          StreamInfoQuery stream_query = {}, CommInfoQuery comm_query = {});
  ~Session();  // stops the flusher; does not close (close() is explicit)
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Recorder& recorder() { return recorder_; }
  void start_flusher();
  // Writes every record buffered so far (a partial chunk too). Safe from any thread.
  void flush();
  // Writes the End record and closes the file. Later records are dropped.
  void close();
  // From a signal handler: writes what is buffered if no other thread holds the locks.
  bool flush_from_signal();
  // In a forked child: this copy of the session must never write to the parent's file.
  void forget_after_fork();
  const std::string& path() const { return file_.path(); }
  bool closed() const { return closed_; }

 private:
  void write_out(bool include_partial, bool end);
  void flusher_loop();

  SessionOptions options_;
  HeaderFn make_header_;
  ChunkBuffer buffer_;
  Recorder recorder_;
  TraceFile file_;
  std::mutex io_mu_;  // orders take+write so chunks reach the file in order
  std::string staging_, packed_;  // raw chunks taken from the buffer, and compressed
  uint64_t dropped_written_ = 0;  // the recorder's dropped count last written (under its lock)
  std::atomic<bool> closed_{false};
  std::atomic<bool> forked_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread flusher_;
};

}  // namespace streamhaz::tracer
