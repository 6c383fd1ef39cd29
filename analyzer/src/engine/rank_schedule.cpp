#include "engine/rank_schedule.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

namespace streamhaz::analysis {
bool RankRun::skipped(const trace::Record& r) const {
  uint64_t seq = 0;
  if (const auto* w = std::get_if<trace::EventWait>(&r)) seq = w->seq;
  else if (const auto* e = std::get_if<trace::EventSync>(&r)) seq = e->seq;
  else if (const auto* s = std::get_if<trace::StreamSync>(&r)) seq = s->seq;
  else if (const auto* d = std::get_if<trace::DeviceSync>(&r)) seq = d->seq;
  else if (const auto* q = std::get_if<trace::EventQuery>(&r)) seq = q->seq;
  else if (const auto* q = std::get_if<trace::StreamQuery>(&r)) seq = q->seq;
  return seq && skip->contains(seq);
}

void RankRun::out_of_memory() const {
  if (reader) throw OutOfMemory("checking", reader->path(), reader->records_read());
  throw OutOfMemory("checking", memory->path, next_record);
}

unsigned worker_threads(const AnalysisOptions& options, size_t ranks) {
  if (ranks < 2) return 1;
  // The over-synchronisation pass's per-pair callbacks take several threads only where they keep
  // what they collect by rank, and only in each rank's own order: with cross-rank order a pass
  // may run twice (a wrong guess running ahead, irregular collectives), and they would collect twice.
  const bool callbacks = options.on_conflict || options.on_ordered_by_sites ||
                         options.on_phantom_ordered_by_sites || options.on_idle_query;
  if (callbacks && !(options.callbacks_by_rank && options.local_order)) return 1;
  // Every core by default, but only where threads pay: with ranks waiting at every collective
  // (below run_ahead_from_ranks) they meet there all the time, and one thread is faster. Ranks in
  // their own order never wait for each other.
  if (!options.jobs && !options.local_order && (ranks < options.run_ahead_from_ranks || !options.run_ahead))
    return 1;
  const unsigned n = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<size_t>(n, ranks));
}

Round run_round(std::vector<RankRun>& runs, CollectiveMatcher& collectives, trace::Record& record) {
  Round round;
  const bool prefetch = runs.size() >= kPrefetchFromRanks;
  for (size_t i = 0; i < runs.size(); ++i) {
    RankRun& run = runs[i];
    if (run.done) continue;
    if (run.engine->blocked()) {
      if (!collectives.ready(run.engine->blocked_on())) {
        ++round.live;
        continue;
      }
      run.engine->resume();
    }
    // The next rank's state loads while this one runs (each turn is a few operations).
    if (prefetch && i + 1 < runs.size() && !runs[i + 1].done) runs[i + 1].prefetch();
    run.run_until_blocked(record);
    round.moved = true;
    round.live += !run.done;
  }
  return round;
}

void run_in_turn(std::vector<RankRun>& runs, CollectiveMatcher& collectives) {
  trace::Record record;
  std::vector<uint32_t> woken;
  size_t live = runs.size();
  while (live) {
    const Round round = run_round(runs, collectives, record);
    live = round.live;
    // Every live rank waits for a collective some rank never issues (missing or cut-off
    // trace, ranks disagreeing on the order): give up those edges rather than stop.
    if (!round.moved) collectives.release_all();
    collectives.take_woken(woken);  // this loop looks at every rank anyway
  }
  collectives.release_all();  // calls only ranks that ran ahead posted: resolved and checked
}

namespace {

// Ranks that can move wait in their thread's queue: rank i is queued for thread i % threads,
// so its state mostly stays in one core's caches; a thread whose queue is empty takes from
// another's (the machine may be shared: a descheduled thread must not stall the round).
class Scheduler {
 public:
  Scheduler(std::vector<RankRun>& runs, CollectiveMatcher& collectives, unsigned threads)
      : runs_(runs), collectives_(collectives), queues_(threads), state_(runs.size(), State::Queued),
        live_(runs.size()) {
    for (size_t i = 0; i < runs.size(); ++i) queues_[i % threads].push_back(static_cast<uint32_t>(i));
    queued_ = runs.size();
  }

  void work(unsigned me) {
    trace::Record record;
    std::vector<uint32_t> woken;
    std::deque<uint32_t>& mine = queues_[me];
    std::unique_lock lock(mutex_);
    for (;;) {
      if (!failed_ && live_ != 0 && queued_ == 0 && running_ != 0) {
        ++idle_;
        cv_.wait(lock, [&] { return failed_ || live_ == 0 || queued_ != 0 || running_ == 0; });
        --idle_;
      }
      if (failed_ || live_ == 0) return;
      if (queued_ == 0) {
        // Nothing runs and nothing can: every live rank waits for a collective never completed.
        collectives_.release_all();
        collectives_.take_woken(woken);
        wake(woken);
        if (idle_) cv_.notify_all();
        continue;
      }
      // Its own ranks first (their state is in this core's caches); with none left, the last
      // queued rank of the longest other queue, so that a thread the OS took the core from
      // does not hold every other thread at the next collective.
      uint32_t i;
      if (!mine.empty()) {
        i = mine.front();
        mine.pop_front();
      } else {
        std::deque<uint32_t>* longest = nullptr;
        for (std::deque<uint32_t>& q : queues_)
          if (!longest || q.size() > longest->size()) longest = &q;
        i = longest->back();
        longest->pop_back();
      }
      --queued_;
      state_[i] = State::Running;
      ++running_;
      // This thread's next rank loads while this one runs. Under the lock: a queued rank runs
      // nowhere, and no thread can take it meanwhile.
      if (prefetch_ && !mine.empty()) runs_[mine.front()].prefetch();
      lock.unlock();
      try {
        step(runs_[i], record);
      } catch (...) {  // bad input: the first error ends the pass (the others stop at their next turn)
        lock.lock();
        if (!failed_) error_ = std::current_exception();
        failed_ = true;
        cv_.notify_all();
        return;
      }
      collectives_.take_woken(woken);
      lock.lock();
      --running_;
      if (runs_[i].done) {
        state_[i] = State::Done;
        --live_;
      } else {
        state_[i] = State::Waiting;
        if (woken_while_running_.erase(i)) enqueue(i);
      }
      const bool queued_any = wake(woken);
      // Sleeping threads wake only for work, the end, or a possible standstill.
      if (idle_ && (queued_any || live_ == 0 || (running_ == 0 && queued_ == 0))) cv_.notify_all();
    }
  }

  std::exception_ptr error_;

 private:
  enum class State { Queued, Running, Waiting, Done };

  static void step(RankRun& run, trace::Record& record) {
    RankEngine& engine = *run.engine;
    if (engine.blocked()) engine.resume();  // queued only once its collective is ready
    run.run_until_blocked(record);
  }
  void enqueue(uint32_t i) {
    state_[i] = State::Queued;
    queues_[i % queues_.size()].push_back(i);
    ++queued_;
  }
  // Queues the ranks whose wait ended; true if any was queued.
  bool wake(const std::vector<uint32_t>& ranks) {
    bool any = false;
    for (uint32_t i : ranks) {
      if (state_[i] == State::Waiting) {
        enqueue(i);
        any = true;
      } else if (state_[i] == State::Running) {
        woken_while_running_.insert(i);
      }
    }
    return any;
  }

  std::vector<RankRun>& runs_;
  CollectiveMatcher& collectives_;
  const bool prefetch_ = runs_.size() >= kPrefetchFromRanks;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::deque<uint32_t>> queues_;
  std::vector<State> state_;
  std::set<uint32_t> woken_while_running_;
  size_t live_;
  size_t queued_ = 0;
  size_t running_ = 0;
  size_t idle_ = 0;
  bool failed_ = false;
};

}  // namespace

ThreadsStarted run_in_parallel(std::vector<RankRun>& runs, CollectiveMatcher& collectives, unsigned threads) {
  Scheduler scheduler(runs, collectives, threads);
  ThreadsStarted started;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    // A process or memory limit (ulimit -u, a container's pids limit, ulimit -v) can refuse a
    // thread: the ranks of its queue are taken by the others, which steal from any queue.
    try {
      pool.emplace_back([&, t] { scheduler.work(t); });
    } catch (const std::system_error& e) {
      started.refused = e.what();
      break;
    }
  }
  started.threads = static_cast<unsigned>(pool.size()) + 1;
  scheduler.work(0);
  for (std::thread& t : pool) t.join();
  if (scheduler.error_) std::rethrow_exception(scheduler.error_);
  collectives.release_all();  // calls only ranks that ran ahead posted: resolved and checked
  return started;
}

}  // namespace streamhaz::analysis
