// The pass's independent pieces of work (one per trace, judged site or rank) on `jobs` threads:
// each index once, by whichever thread takes it next. Each result goes to its own slot, so the
// outcome is the one-thread loop's; the error of the lowest index that failed is the one thrown.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace streamhaz::analysis {

// `jobs` as AnalysisOptions::jobs: 0 is every core.
template <class F>
void for_each_index(size_t n, unsigned jobs, F&& f) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min<size_t>(n, jobs ? jobs : cores);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      try {
        f(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // a thread refused (ulimit -u): the others take its share
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace streamhaz::analysis
