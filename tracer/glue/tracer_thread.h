// The tracer's own threads (the GPU-times windows, the driver wrappers' audits).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace streamhaz::tracer::glue {

// One tracer thread and its stop request. It receives no signal: they go to the program's
// threads, since a handler that exits on a tracer thread would run the exit hook, which joins
// that thread. Its body waits on wake() with mu() held and ends once stop_requested().
class TracerThread {
 public:
  // Starts `body` on a thread named `name` (at most 15 characters, shown by profilers). Throws
  // std::system_error when no thread can be made.
  void start(const char* name, std::function<void()> body);
  // Asks the body to stop, wakes its waits and joins it (unless called on the thread itself, by
  // an exit hook run there).
  void stop();

  std::mutex& mu() { return mu_; }
  std::condition_variable& wake() { return wake_; }
  bool stop_requested() const { return stop_; }  // with mu() held

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
};

}  // namespace streamhaz::tracer::glue
