#include "tracer_thread.h"

#include <pthread.h>
#include <signal.h>

namespace streamhaz::tracer::glue {

void TracerThread::start(const char* name, std::function<void()> body) {
  // The new thread inherits the mask in place when it is made.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    thread_ = std::thread([name, body = std::move(body)] {
      pthread_setname_np(pthread_self(), name);
      body();
    });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void TracerThread::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

}  // namespace streamhaz::tracer::glue
