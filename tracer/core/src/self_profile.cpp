#include "streamhaz/tracer/self_profile.h"

#include <pthread.h>
#include <time.h>

#include <deque>

#include "streamhaz/tracer/recorder.h"

namespace streamhaz::tracer {

namespace self_profile_detail {
std::atomic<bool> enabled{false};
}

namespace {
std::atomic<bool> in_step{false};
std::atomic<uint64_t> steps{0};
}  // namespace

namespace {

struct PhaseInfo {
  const char* name;
  const char* inside;
  const char* what;
};
constexpr PhaseInfo kPhases[] = {
#define STREAMHAZ_PHASE_INFO(id, name, inside, what) {name, inside, what},
    STREAMHAZ_TRACER_PHASES(STREAMHAZ_PHASE_INFO)
#undef STREAMHAZ_PHASE_INFO
};
static_assert(std::size(kPhases) == kPhaseCount);

// Written by its thread only, read by the report: relaxed atomics, no read-modify-write.
struct ThreadCounters {
  uint64_t tid = 0;
  char name[16] = {};
  std::atomic<uint64_t> calls[kPhaseCount] = {};
  std::atomic<uint64_t> ns[kPhaseCount] = {};
  std::atomic<uint64_t> step_calls[kPhaseCount] = {};  // the part inside training steps
  std::atomic<uint64_t> step_ns[kPhaseCount] = {};
};

std::mutex& registry_mu() {
  static auto* mu = new std::mutex;  // never destroyed: threads may end after exit handlers
  return *mu;
}
std::deque<ThreadCounters>& registry() {
  static auto* all = new std::deque<ThreadCounters>;  // stable addresses, never freed
  return *all;
}

ThreadCounters& mine() {
  thread_local ThreadCounters* counters = nullptr;
  if (!counters) {
    std::lock_guard lock(registry_mu());
    counters = &registry().emplace_back();
    counters->tid = current_thread_id();
    pthread_getname_np(pthread_self(), counters->name, sizeof counters->name);
  }
  return *counters;
}

void bump(std::atomic<uint64_t>& a, uint64_t by) { a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed); }

}  // namespace

void enable_self_profile(bool on) { self_profile_detail::enabled.store(on, std::memory_order_relaxed); }

void profile_step_began(int index) {
  if (index < kProfileWarmupSteps) return;
  in_step.store(true, std::memory_order_relaxed);
  steps.fetch_add(1, std::memory_order_relaxed);
}

void profile_step_ended() { in_step.store(false, std::memory_order_relaxed); }

bool profile_in_step() { return in_step.load(std::memory_order_relaxed); }

uint64_t profile_clock_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

void add_phase_time(Phase p, uint64_t ns) {
  ThreadCounters& c = mine();
  bump(c.calls[size_t(p)], 1);
  bump(c.ns[size_t(p)], ns);
  if (in_step.load(std::memory_order_relaxed)) {
    bump(c.step_calls[size_t(p)], 1);
    bump(c.step_ns[size_t(p)], ns);
  }
}

nlohmann::json self_profile_json() {
  std::lock_guard lock(registry_mu());
  uint64_t calls[kPhaseCount] = {}, ns[kPhaseCount] = {}, step_calls[kPhaseCount] = {}, step_ns[kPhaseCount] = {};
  nlohmann::json threads = nlohmann::json::array();
  for (const ThreadCounters& c : registry()) {
    nlohmann::json phases = nlohmann::json::object();
    for (size_t p = 0; p < kPhaseCount; ++p) {
      const uint64_t k = c.calls[p].load(std::memory_order_relaxed), t = c.ns[p].load(std::memory_order_relaxed);
      if (k == 0) continue;
      calls[p] += k;
      ns[p] += t;
      step_calls[p] += c.step_calls[p].load(std::memory_order_relaxed);
      step_ns[p] += c.step_ns[p].load(std::memory_order_relaxed);
      phases[kPhases[p].name] = {k, t};
    }
    threads.push_back({{"tid", c.tid}, {"name", std::string(c.name)}, {"phases", std::move(phases)}});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (size_t p = 0; p < kPhaseCount; ++p)
    rows.push_back({{"name", kPhases[p].name}, {"inside", kPhases[p].inside}, {"what", kPhases[p].what},
                    {"calls", calls[p]}, {"ns", ns[p]}, {"step_calls", step_calls[p]}, {"step_ns", step_ns[p]}});
  return {{"steps", steps.load(std::memory_order_relaxed)}, {"phases", std::move(rows)}, {"threads", std::move(threads)}};
}

}  // namespace streamhaz::tracer
