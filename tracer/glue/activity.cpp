#include "activity.h"

#include <cupti.h>

#include <chrono>
#include <deque>
#include <cstdlib>
#include <mutex>

#include "driver_wrappers.h"
#include "tracer_state.h"
#include "tracer_thread.h"

namespace streamhaz::tracer::glue {
namespace {

constexpr size_t kBufferBytes = 4 << 20;

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Recorder* rec = state().session ? &state().session->recorder() : nullptr;
  PhaseTimer timer(Phase::ActivityBuffer);
  CUpti_Activity* record = nullptr;
  while (rec && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
        rec->activity(k->correlationId, k->start, k->end);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        rec->activity(m->correlationId, m->start, m->end);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record);
        rec->activity(m->correlationId, m->start, m->end);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
        rec->activity(m->correlationId, m->start, m->end);
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
}

constexpr CUpti_ActivityKind kTimedKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                              CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

// Turns collection off, whatever state a failed switch left it in.
void stop_collecting() {
  for (CUpti_ActivityKind kind : kTimedKinds) cuptiActivityDisable(kind);
  if (state().session) state().session->recorder().set_timings_expected(false);
}

// Turns collection on or off. The recorder is told first when opening and last when
// closing, so an operation CUPTI times is always one the recorder waits for. A switch that
// fails leaves collection off.
bool collect_times(bool on, std::string& why_not) {
  Recorder* rec = state().session ? &state().session->recorder() : nullptr;
  if (on && rec) rec->set_timings_expected(true);
  for (CUpti_ActivityKind kind : kTimedKinds) {
    CUptiResult r = on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
    if (r != CUPTI_SUCCESS) {
      why_not = std::string("cannot ") + (on ? "enable" : "disable") + " CUPTI activity kind " +
                std::to_string(static_cast<int>(kind));
      stop_collecting();
      return false;
    }
  }
  if (!on && rec) rec->set_timings_expected(false);
  return true;
}

// Operations issued up to a window close long ago that still wait will not be timed: issued
// in the microseconds while the window switched (CUPTI never saw them), or running for
// longer than kStaleAfter. Each opening flushes what completed, so this loses no timing of
// an operation that ended within kStaleAfter of its window.
using Closes = std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>>;
constexpr std::chrono::seconds kStaleAfter{10};
void forget_stale(Recorder& rec, Closes& closes, std::chrono::steady_clock::time_point now) {
  uint64_t through = 0;
  while (!closes.empty() && now - closes.front().first >= kStaleAfter) {
    through = closes.front().second;
    closes.pop_front();
  }
  if (through) rec.forget_timings_through(through);
}

void deliver_timed_steps_soon();  // through the window thread, below

// GPU times by steps (GpuTimes::Steps): collection is on from the start; a step's begin switches
// it on when the step is timed and collection is off, a step's end switches it off when the
// policy says so (closes_after_step). Pushes and pops come from any thread of the program: one
// lock orders the switches.
struct StepTimes {
  std::mutex mu;
  const TimingPolicy* policy = nullptr;  // set once collection runs in Steps mode
  bool collecting = true, failed = false;
  int current = -1;                      // the last step begun (-1: none yet)
  Closes closes;
};
StepTimes* step_times = nullptr;  // never freed: a pop may come after exit

// Switches collection, with `st.mu` held.
void switch_for_step(StepTimes& st, bool on) {
  if (st.failed || on == st.collecting) return;
  Recorder* rec = active_recorder();
  const auto now = std::chrono::steady_clock::now();
  PhaseTimer timer(Phase::ActivitySwitch);  // on the program's thread: its NVTX push or pop
  if (on) {
    cuptiActivityFlushAll(0);  // the last timed step's partly filled buffers
    if (rec) forget_stale(*rec, st.closes, now);
  }
  // The wrappers' records have no correlation id: CUPTI's callbacks record while times are taken.
  if (on) hand_hot_calls_to_cupti();
  std::string why;
  if (!collect_times(on, why)) {
    st.failed = true;
    if (rec) rec->meta(nlohmann::json{{"gpu_times_stopped", why}}.dump());
    return;
  }
  if (!on && rec) st.closes.emplace_back(now, rec->last_seq());
  st.collecting = on;
  if (!on) deliver_timed_steps_soon();
}

// Steps: a program with no step by the policy's first_step_wait has timed what it will time
// before one; collection goes off until its first timed step, if one comes.
void close_before_first_step(StepTimes& st) {
  if (Recorder* rec = active_recorder()) rec->stop_counting_pattern_steps();  // nothing left for it to close
  std::lock_guard lock(st.mu);
  if (st.current < 0) switch_for_step(st, false);
}

// Steps: a program with no step range whose calls repeat (Recorder::count_pattern_steps) has run
// the warm-up and the timed steps: collection goes off, as after a range's K-th step. A step
// range whose first step comes later is timed as after first_step_wait (switched on again).
void close_after_pattern(StepTimes& st, size_t period, int periods) {
  std::lock_guard lock(st.mu);
  if (st.current >= 0 || !st.collecting || st.failed) return;  // a range's steps, or closed already
  switch_for_step(st, false);
  if (st.collecting) return;
  Recorder* rec = active_recorder();
  if (!rec || st.closes.empty()) return;
  // The last call issued while collection was on: later ones are not timed.
  rec->meta(nlohmann::json{{"gpu_times_steps_from_pattern",
                            {{"period", period}, {"periods", periods}, {"seq", st.closes.back().second}}}}
                .dump());
}

// Steps: with collection closed, the tracer's wrappers record the hot calls instead of CUPTI's
// callbacks. On the window thread, which issues no GPU work, since the hand-over waits for calls
// in flight; under the steps' lock, so that a step opening collection meanwhile hands them back
// after, not before.
void hand_over_while_closed() {
  if (!step_times) return;
  std::lock_guard lock(step_times->mu);
  if (!step_times->collecting && !step_times->failed) hand_hot_calls_to_wrappers();
}

// The thread that switches collection on a clock: the sampled windows, or in Steps mode the
// one close at first_step_wait when no step has begun.
class WindowThread {
 public:
  // Throws std::system_error when no thread can be made.
  void start(const TimingPolicy& policy) {
    thread_.start("shz-gpu-times", [this, policy] {
      if (policy.mode == GpuTimes::Steps) {
        const size_t period = wait_for_first_step(policy);
        if (period && step_times) close_after_pattern(*step_times, period, pattern_periods(policy));
        if (stopping()) return;  // the program is exiting: no hand-over (its audits are over)
        hand_over_while_closed();
        deliver_closed_steps();
      } else {
        sample(policy);
      }
    });
  }
  // Steps: collection closed after a timed step; its times wait in a partly filled buffer.
  void deliver_soon() {
    {
      std::lock_guard lock(thread_.mu());
      deliver_ = true;
    }
    thread_.wake().notify_all();
  }

  // Steps: the program's calls repeat, `period` calls a step; called once, on a program thread.
  void pattern_found(size_t period) {
    {
      std::lock_guard lock(thread_.mu());
      pattern_period_ = period;
    }
    thread_.wake().notify_all();
  }

  void stop() { thread_.stop(); }

 private:
  bool stopping() {
    std::lock_guard lock(thread_.mu());
    return thread_.stop_requested();
  }

  // Ends early at a stop, at a timed step's close (a step has begun, so nothing to close), or
  // when the program's calls repeat: then returns their period, for the caller to close (0: none).
  size_t wait_for_first_step(const TimingPolicy& policy) {
    std::unique_lock lock(thread_.mu());
    const auto stop_or_close = [this] { return thread_.stop_requested() || deliver_ || pattern_period_ != 0; };
    if (thread_.wake().wait_for(lock, policy.first_step_wait, stop_or_close))
      return deliver_ || thread_.stop_requested() ? 0 : pattern_period_;
    lock.unlock();  // step_times' lock comes next; stop() takes this one
    if (step_times) close_before_first_step(*step_times);
    return 0;
  }

  // CUPTI's worker hands over full buffers only, and a step-timed run switches collection on
  // again rarely (by default never): without this the timed steps' records would come at exit,
  // after the whole run (lost with a killed rank, and read past by every analysis). A default
  // flush returns the buffers whose records are complete, so it waits for the GPU to finish the
  // steps first, and tries again later for a step still running.
  void deliver_closed_steps() {
    constexpr std::chrono::milliseconds kAfter[] = {std::chrono::milliseconds(500), std::chrono::seconds(2),
                                                    std::chrono::seconds(10)};
    std::unique_lock lock(thread_.mu());
    while (!thread_.stop_requested()) {
      thread_.wake().wait(lock, [this] { return thread_.stop_requested() || deliver_; });
      deliver_ = false;
      lock.unlock();  // the steps' lock comes next; a close takes this one after it
      hand_over_while_closed();
      lock.lock();
      for (auto after : kAfter) {
        if (thread_.wake().wait_for(lock, after, [this] { return thread_.stop_requested(); })) return;
        lock.unlock();  // the flush calls back into the recorder; a close may come meanwhile
        {
          PhaseTimer timer(Phase::ActivitySwitch);
          cuptiActivityFlushAll(0);
        }
        lock.lock();
        if (deliver_) break;  // another close: start over from the first wait
      }
    }
  }

  void sample(const TimingPolicy& policy) {
    const auto begin = std::chrono::steady_clock::now();
    bool open = true;  // opened by start_activity
    // (when, last operation issued) at each window close: what may still wait for activity.
    Closes closes;
    std::unique_lock lock(thread_.mu());
    while (!thread_.stop_requested()) {
      const auto now = std::chrono::steady_clock::now();
      auto since = std::chrono::duration_cast<std::chrono::milliseconds>(now - begin);
      bool want = timing_window_open(policy, since);
      if (want != open) {
        PhaseTimer timer(Phase::ActivitySwitch);
        Recorder* rec = active_recorder();
        if (want && rec) {
          // CUPTI's worker hands over only full buffers; a window's few records could sit in
          // one for minutes. Collection has been off since the last window: deliver them.
          cuptiActivityFlushAll(0);
          forget_stale(*rec, closes, now);
        }
        std::string why;
        if (!collect_times(want, why)) {
          // Said in the trace, not on stderr: this can happen at any time, even during the
          // program's own teardown, and the program's output stays as it was.
          if (rec) rec->meta(nlohmann::json{{"gpu_times_stopped", why}}.dump());
          return;
        }
        if (!want && rec) closes.emplace_back(now, rec->last_seq());
        open = want;
      }
      thread_.wake().wait_for(lock, until_next_timing_change(policy, since));
    }
  }

  TracerThread thread_;
  bool deliver_ = false;  // with thread_.mu() held
  size_t pattern_period_ = 0;  // with thread_.mu() held; 0: not found
};

WindowThread* window_thread = nullptr;

void deliver_timed_steps_soon() {
  if (window_thread) window_thread->deliver_soon();
}

}  // namespace

void on_step_begin(int index) {
  if (!step_times) return;
  StepTimes& st = *step_times;
  std::lock_guard lock(st.mu);
  if (!st.policy) return;
  st.current = index;
  if (step_timed(*st.policy, index)) switch_for_step(st, true);
}

void on_step_end() {
  if (!step_times) return;
  StepTimes& st = *step_times;
  std::lock_guard lock(st.mu);
  if (st.policy && st.current >= 0 && closes_after_step(*st.policy, st.current)) switch_for_step(st, false);
}

bool start_activity(TimingPolicy& policy, std::string& why_not) {
  if (policy.mode == GpuTimes::Off) {
    state().session->recorder().set_timings_expected(false);
    return true;
  }
  auto give_up = [&](std::string why) {
    why_not = std::move(why);
    policy.mode = GpuTimes::Off;
    return false;
  };
  if (cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed) != CUPTI_SUCCESS) {
    stop_collecting();
    return give_up("cannot register CUPTI activity buffers");
  }
  std::string why;
  if (!collect_times(true, why)) return give_up(why);
  // CUPTI's worker checks every second; it returns full buffers only (partly filled ones come
  // with a window's opening in sampled mode, and at exit).
  cuptiActivityFlushPeriod(1000);
  if (policy.mode == GpuTimes::Steps) {
    step_times = new StepTimes;
    std::lock_guard lock(step_times->mu);
    step_times->policy = &policy;
  }
  if (policy.mode == GpuTimes::Sampled || policy.mode == GpuTimes::Steps) {
    auto* windows = new WindowThread;  // never freed: a callback may come after exit
    try {
      windows->start(policy);
      window_thread = windows;
      if (policy.mode == GpuTimes::Steps)
        state().session->recorder().count_pattern_steps(pattern_periods(policy), [](size_t period, uint64_t) {
          if (window_thread) window_thread->pattern_found(period);
        });
    } catch (const std::exception& e) {
      if (policy.mode == GpuTimes::Sampled) {
        // No thread to close the windows: collection stays on for the whole run.
        warn(std::string("cannot start the GPU-times window thread (") + e.what() + "); timing every operation");
        policy.mode = GpuTimes::All;
      }  // Steps: the steps still close collection; a program without one is timed throughout
    }
  }
  return true;
}

void stop_activity_sampler() {
  if (window_thread) window_thread->stop();
}

void flush_activity() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

void give_up_activity() {
  stop_activity_sampler();
  if (step_times) {
    std::lock_guard lock(step_times->mu);
    step_times->failed = true;  // no step switches collection on again
  }
  flush_activity();
  stop_collecting();
}

}  // namespace streamhaz::tracer::glue
