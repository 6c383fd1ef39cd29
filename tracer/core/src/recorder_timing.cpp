// Recorder, NVTX and GPU times: ranges and training steps, activity joined to operations by
// correlation id, and Meta records.
#include "streamhaz/tracer/recorder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

#include "streamhaz/trace/range_path.h"

namespace streamhaz::tracer {

using namespace streamhaz::trace;

void Recorder::set_step_range(std::string name) {
  TimedLock lock(mu_);
  step_range_ = std::move(name);
}

int Recorder::nvtx_push(std::string_view message) {
  TimedLock lock(mu_);
  // A range without readable text (a library's registered string) keeps push/pop balanced
  // but adds no segment: operations inside it show their program's path, and no edge is written.
  if (message.empty()) {
    ThreadState& t = quiet_thread_state();
    t.nvtx.push_back(t.nvtx.empty() ? 0 : t.nvtx.back());
    t.nvtx_paths.push_back(t.nvtx_paths.empty() ? std::string() : t.nvtx_paths.back());
    return -1;
  }
  ThreadState& t = thread_state();
  std::string path;
  if (!t.nvtx_paths.empty() && !t.nvtx_paths.back().empty()) path = t.nvtx_paths.back() + '/';
  path += message;
  const StringId id = intern(path);
  const bool opens_step = !open_step_ && trace::opens_outermost_range(path, step_range_);
  t.nvtx.push_back(id);
  t.nvtx_paths.push_back(std::move(path));
  emit(RangeEdge{next_seq(), id, true});
  if (!opens_step) return -1;
  open_step_ = id;
  pattern_.reset();  // the range's steps are the steps
  return steps_++;
}

void Recorder::count_pattern_steps(int periods, PatternFound found) {
  TimedLock lock(mu_);
  if (steps_ > 0) return;
  pattern_ = std::make_unique<PatternClock>(periods);
  pattern_found_call_ = std::move(found);
}

void Recorder::stop_counting_pattern_steps() {
  TimedLock lock(mu_);
  pattern_.reset();
}

void Recorder::count_pattern(const Record& r, CallsiteId site) {
  trace::StepToken token;
  if (!trace::step_token(r, token)) return;
  if (site) token.key = trace::with_call_site(token.key, site);
  if (!pattern_->feed(token)) return;
  found_period_ = pattern_->period();
  found_seq_ = seq_;
  pattern_.reset();  // found once: nothing more to count
  pattern_found_.store(true, std::memory_order_relaxed);
}

void Recorder::hand_pattern_steps_over() {
  PatternFound found;
  size_t period;
  uint64_t seq;
  {
    TimedLock lock(mu_);
    if (!pattern_found_.exchange(false, std::memory_order_relaxed)) return;  // another thread did
    found = std::move(pattern_found_call_);
    period = found_period_;
    seq = found_seq_;
  }
  if (found) found(period, seq);
}

bool Recorder::nvtx_pop() {
  TimedLock lock(mu_);
  ThreadState& q = quiet_thread_state();
  if (q.nvtx.empty()) return false;  // a pop without push: ignore, as NVTX does
  const StringId id = q.nvtx.back();
  const bool segment = q.nvtx.size() < 2 ? id != 0 : id != q.nvtx[q.nvtx.size() - 2];
  ThreadState& t = segment ? thread_state() : q;
  t.nvtx.pop_back();
  t.nvtx_paths.pop_back();
  if (!segment) return false;
  emit(RangeEdge{next_seq(), id, false});
  if (id != open_step_) return false;
  open_step_ = 0;
  return true;
}

void Recorder::activity(uint64_t correlation, uint64_t start_ns, uint64_t end_ns) {
  TimedLock lock(mu_);
  if (!many_ops_.empty()) {
    if (auto many = many_ops_.find(correlation); many != many_ops_.end()) {
      for (uint64_t seq : many->second.seqs) emit(Timing{seq, start_ns, end_ns});
      if (!many->second.keep) many_ops_.erase(many);
      return;
    }
  }
  const uint64_t* seq = one_op_.find(correlation);
  if (!seq) return;  // not an operation we recorded
  emit(Timing{*seq, start_ns, end_ns});
  one_op_.erase(correlation);
}

void Recorder::forget_timings_through(uint64_t seq) {
  TimedLock lock(mu_);
  one_op_.erase_if([seq](uint64_t, uint64_t op) { return op <= seq; });
  for (auto it = many_ops_.begin(); it != many_ops_.end();) {
    const auto& seqs = it->second.seqs;
    const bool old = std::all_of(seqs.begin(), seqs.end(), [seq](uint64_t op) { return op <= seq; });
    it = old ? many_ops_.erase(it) : std::next(it);
  }
}

void Recorder::meta(std::string json) {
  TimedLock lock(mu_);
  emit(Meta{std::move(json)});
}

uint64_t Recorder::stop_observing(std::string_view why) {
  TimedLock lock(mu_);
  const uint64_t from = seq_ + 1;
  if (!stopped_) sink_.add(Meta{nlohmann::json{{"unobserved", {{"from_seq", from}, {"reason", std::string(why)}}}}.dump()});
  stopped_ = true;
  return from;
}

uint64_t Recorder::last_seq() const {
  TimedLock lock(mu_);
  return seq_;
}

size_t Recorder::pending_correlations() const {
  TimedLock lock(mu_);
  return one_op_.size() + many_ops_.size();
}

}  // namespace streamhaz::tracer
