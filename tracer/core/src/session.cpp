#include "streamhaz/tracer/session.h"

#include <pthread.h>

#include "streamhaz/trace/writer.h"
#include "streamhaz/tracer/self_profile.h"

namespace streamhaz::tracer {

Session::Session(SessionOptions options, const ProcessIdentity& who, HeaderFn make_header,
                 StreamInfoQuery stream_query, CommInfoQuery comm_query)
    : options_(std::move(options)),
      make_header_(std::move(make_header)),
      buffer_(options_.chunk_bytes),
      recorder_(buffer_, std::move(stream_query), std::move(comm_query)),
      file_(options_.out_dir, trace_file_name(who), fallback_trace_file_name(who)) {}

Session::~Session() {
  {
    std::lock_guard lock(wake_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) {
    if (forked_) {
      flusher_.detach();  // the thread does not exist in a forked child
    } else {
      flusher_.join();
    }
  }
}

void Session::start_flusher() {
  if (flusher_.joinable() || options_.flush_period.count() <= 0) return;
  flusher_ = std::thread([this] { flusher_loop(); });
}

void Session::flusher_loop() {
  pthread_setname_np(pthread_self(), "shz-flush");  // tells it apart in profilers
  std::unique_lock lock(wake_mu_);
  while (!stop_) {
    wake_.wait_for(lock, options_.flush_period);
    if (stop_) break;
    lock.unlock();
    // Whole chunks only between periods would leave a slow program's trace empty for long;
    // the partial chunk goes too, so a killed rank loses at most one period.
    write_out(/*include_partial=*/true, /*end=*/false);
    lock.lock();
  }
}

void Session::write_out(bool include_partial, bool end) {
  if (forked_) return;
  std::lock_guard io(io_mu_);
  if (closed_) return;
  staging_.clear();
  recorder_.with_lock([&] {
    // No records at all: no file (the End record alone would create one).
    if (end && buffer_.records() == 0 && !file_.opened() && recorder_.dropped() == 0) return 0;
    // A Meta record merges into the header when read: the last one written gives the count.
    if (const uint64_t dropped = recorder_.dropped(); dropped != dropped_written_) {
      buffer_.add(trace::Meta{nlohmann::json{{"dropped_records", dropped}}.dump()});
      dropped_written_ = dropped;
    }
    if (end && self_profiling())
      buffer_.add(trace::Meta{nlohmann::json{{"tracer_profile", self_profile_json()}}.dump()});
    if (end) buffer_.add(trace::End{buffer_.records()});
    buffer_.take(staging_, include_partial || end);
    return 0;
  });
  // Compressed here, outside the recorder's lock (a signal handler's flush writes raw chunks).
  packed_.clear();
  {
    PhaseTimer timer(Phase::Compress);
    trace::compress_chunks(staging_, packed_);
  }
  PhaseTimer timer(Phase::Write);
  file_.write(packed_, make_header_);
  if (end) {
    closed_ = true;
    file_.close();
  }
}

void Session::flush() { write_out(true, false); }

void Session::close() {
  {
    std::lock_guard lock(wake_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable() && !forked_ && flusher_.get_id() != std::this_thread::get_id()) flusher_.join();
  write_out(true, true);
}

bool Session::flush_from_signal() {
  if (forked_ || closed_) return false;
  std::unique_lock io(io_mu_, std::try_to_lock);
  if (!io.owns_lock()) return false;
  // Opening builds the header, which allocates: not here. The flusher opens it early.
  if (!file_.opened()) return false;
  auto rec = recorder_.try_lock();
  if (!rec.owns_lock()) return false;
  staging_.clear();
  buffer_.take(staging_, true);
  rec.unlock();
  return file_.write(staging_, make_header_);
}

void Session::forget_after_fork() { forked_ = true; }

}  // namespace streamhaz::tracer
