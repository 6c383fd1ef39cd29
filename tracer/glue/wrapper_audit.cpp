#include "wrapper_audit.h"

#include <chrono>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "driver_wrappers.h"
#include "tracer_state.h"
#include "tracer_thread.h"

namespace streamhaz::tracer::glue {
namespace {

// A window of 200 ms every 10 s: CUPTI's dispatch (2-4 % of a host-bound step) for 2 % of the
// run. The first comes soon after the hand-over, so that a short run is audited too.
constexpr std::chrono::milliseconds kFirstAudit{1000};
constexpr std::chrono::milliseconds kWindow{200};
constexpr std::chrono::milliseconds kPeriod{10000};

// Says in the trace which calls may be missing: those issued since the last audit that found
// none around the wrappers, up to now (CUPTI records them from here on).
void report_calls_around(uint64_t clean_through, uint64_t around) {
  Recorder* rec = active_recorder();
  if (!rec) return;
  const WrapperAuditCounts counts = wrapper_audit_counts();
  const uint64_t to = rec->last_seq();
  const std::string why = std::to_string(around) + " driver call(s) (" + counts.first_around +
                          " first) reached the driver around the tracer's wrappers, by a way to the driver the "
                          "tracer does not stand in; calls made that way between the wrappers' audits are not in "
                          "the trace, and CUPTI records every such call from #" + std::to_string(to + 1) + " on";
  rec->meta(nlohmann::json{{"unobserved", {{"from_seq", clean_through + 1}, {"to_seq", to}, {"reason", why}}}}.dump());
}

class AuditThread {
 public:
  // Throws std::system_error when no thread can be made.
  void start() {
    thread_.start("shz-wrap-audit", [this] { run(); });
  }
  void stop() { thread_.stop(); }

 private:
  // True when stopped.
  bool wait(std::chrono::milliseconds d) {
    std::unique_lock lock(thread_.mu());
    return thread_.wake().wait_for(lock, d, [this] { return thread_.stop_requested(); });
  }

  void run() {
    Recorder* rec = active_recorder();
    uint64_t clean_through = rec ? rec->last_seq() : 0;
    bool stopping = wait(kFirstAudit);
    while (!stopping) {
      if (begin_hot_call_audit()) {
        stopping = wait(kWindow);
        if (const uint64_t around = end_hot_call_audit()) {
          report_calls_around(clean_through, around);
          return;
        }
        if (Recorder* r = active_recorder()) clean_through = r->last_seq();
      }
      if (!stopping) stopping = wait(kPeriod);
    }
    // At exit: a call seen around the wrappers outside a window (at a hand-over) still counts.
    if (const uint64_t around = end_hot_call_audit()) report_calls_around(clean_through, around);
  }

  TracerThread thread_;
};

std::mutex audit_mu;
AuditThread* audit_thread = nullptr;  // never freed: a forked child must not destroy a copy

}  // namespace

bool start_wrapper_audits() {
  std::lock_guard lock(audit_mu);
  if (audit_thread) return true;
  auto* t = new AuditThread;
  try {
    t->start();
  } catch (const std::exception& e) {
    delete t;
    warn(std::string("cannot start the driver wrappers' audit thread (") + e.what() +
         "); CUPTI's callbacks record every call");
    return false;
  }
  audit_thread = t;
  return true;
}

void stop_wrapper_audits() {
  AuditThread* t = nullptr;
  {
    std::lock_guard lock(audit_mu);
    t = audit_thread;
  }
  if (!t) return;
  t->stop();
  if (Recorder* rec = active_recorder()) {
    const WrapperAuditCounts c = wrapper_audit_counts();
    rec->meta(nlohmann::json{{"driver_wrappers", {{"audits", c.audits},
                                                  {"calls_seen_in_wrappers", c.seen_in_wrappers},
                                                  {"calls_seen_around", c.seen_around}}}}
                  .dump());
  }
}

}  // namespace streamhaz::tracer::glue
