#include "sync/shape_reader.h"

#include <algorithm>
#include <new>

#include "streamhaz/analysis/replay.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

int count_timed(std::vector<StepShape>& steps, uint64_t op_seq) {
  auto after = std::upper_bound(steps.begin(), steps.end(), op_seq,
                                [](uint64_t seq, const StepShape& s) { return seq < s.first_seq; });
  if (after == steps.begin()) return -1;
  ++(op_seq <= std::prev(after)->last_seq ? std::prev(after)->timed : std::prev(after)->timed_after);
  return static_cast<int>(after - steps.begin()) - 1;
}

RecordFacts facts_of(const trace::Record& r) { return RecordFacts{trace::api_seq(r), sync_kind(r).has_value()}; }

void add_to_step(TraceShape& t, RecordFacts f, uint64_t index, int step, int& current) {
  if (step >= 0 && step != current) {
    current = step;
    t.steps.resize(step + 1);
    t.steps[step].first_record = index;
  }
  if (current < 0) return;
  StepShape& s = t.steps[current];
  ++s.records;
  if (step == current) s.last_record = index;
  if (f.sync) ++s.syncs;
  if (step == current && step >= 0) {
    s.first_seq = std::min(s.first_seq, f.seq);
    s.last_seq = std::max(s.last_seq, f.seq);
  }
}

namespace {

// A second read of a trace without a step range, its steps starting at `starts` (record
// indices), none from `end` on: where the first read's sums cannot shape them (step_segments.h).
void shape_by_starts(const std::string& file, const std::vector<uint64_t>& starts, uint64_t end, TraceShape& t) {
  trace::TraceReader reader(file);
  trace::Record r;
  uint64_t index = 0;
  int current = -1;
  t.steps.clear();
  try {
    while (reader.next(r)) {
      if (trace::is_stack_record(r)) continue;
      const uint64_t at = index++;
      if (const auto* tm = std::get_if<trace::Timing>(&r)) count_timed(t.steps, tm->op_seq);
      const int step =
          at >= end ? -1 : static_cast<int>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
      // Every call from a step's start to the next one's is the step's (as with range edges).
      const RecordFacts f = facts_of(r);
      add_to_step(t, f, at, f.seq ? step : -1, current);
    }
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("reading", file, reader.records_read());
  }
}

}  // namespace

void ShapeReader::on_record(const trace::Record& r) {
  const auto* tm = std::get_if<trace::Timing>(&r);
  if (tm || std::holds_alternative<trace::Access>(r)) return on_plain(tm);
  TraceShape& t = shape_;
  const bool unranged = t.steps.empty();
  const size_t tokens = pattern_.tokens().size();
  if (unranged) pattern_.feed(r, t.records);
  if (trace::is_stack_record(r)) return;
  const bool token = pattern_.tokens().size() > tokens;
  const uint64_t index = t.records++;
  const RecordFacts f = facts_of(r);
  if (unranged) {
    segments_.add(f, index, token || after_token_);
    after_token_ = token;
  }
  if (std::holds_alternative<trace::CaptureBegin>(r)) t.capture_records.push_back(index);
  add_to_step(t, f, index, finder_.feed(r), current_);
  // A step's records are all counted once the next one begins.
  for (size_t j = records_before_.size(); j < t.steps.size(); ++j)
    records_before_.push_back(j == 0 ? 0 : records_before_[j - 1] + t.steps[j - 1].records);
}

// Accesses and GPU times, most of a trace, are no call, token, range edge or synchronisation:
// they only count, as the general path would count them.
void ShapeReader::on_plain(const trace::Timing* tm) {
  TraceShape& t = shape_;
  const uint64_t index = t.records++;
  if (t.steps.empty()) {
    segments_.add_plain(index, after_token_);
    after_token_ = false;
    if (tm) segments_.add_timing(tm->op_seq);
  }
  if (tm) {
    const int step = count_timed(t.steps, tm->op_seq);
    if (step >= 0 && keeps_timing_of(step, *tm)) t.timings.push_back({index, *tm});
  }
  if (current_ >= 0) ++t.steps[current_].records;  // add_to_step of a record that is no call
}

// Whether a judged window may hold GPU time `tm` of an operation of `step` (sync_window.cpp's
// choose): the window starts at the first step after the warm-up with a time, or just before it
// (the operations between the last warm-up step and it), and holds the steps after it within its
// record budget. Keeps a superset: a step's records still growing, a first timed step learnt
// late. With none timed by then, the operations between steps are kept (there are few).
bool ShapeReader::keeps_timing_of(int step, const trace::Timing& tm) {
  const int warmup = keep_.warmup_steps;
  if (step < warmup - 1) return false;
  const StepShape& s = shape_.steps[step];
  const bool within = tm.op_seq <= s.last_seq;
  if (step >= warmup && within && (first_timed_ < 0 || step < first_timed_)) first_timed_ = step;
  if (first_timed_ < 0 || step < first_timed_) return step >= warmup || !within;
  return records_before_[step] + s.records - records_before_[first_timed_] <= keep_.window_records;
}

TraceShape ShapeReader::finish(const std::string& file, bool reread_pattern_steps) {
  TraceShape t = std::move(shape_);
  t.range_edges = finder_.range_edges();
  // A window of a trace with no more steps than the warm-up starts at its first step.
  t.timings_kept = !t.steps.empty() && t.steps.size() > static_cast<size_t>(std::max(keep_.warmup_steps, 0));
  if (!t.timings_kept) t.timings = {};
  if (t.steps.empty()) {
    const PatternSteps steps = find_pattern_steps(pattern_.tokens());
    if (steps.period) {
      t.pattern_period = steps.period;
      if (reread_pattern_steps || !segments_.shape(steps.starts, steps.end, t)) {
        shape_by_starts(file, steps.starts, steps.end, t);
        t.second_read = true;
      }
    }
  }
  return t;
}

TraceShape shape_of(const std::string& file, const std::string& step_range, TimingKeep keep,
                    bool reread_pattern_steps) {
  ShapeReader shaper(step_range, keep);
  trace::TraceReader reader(file);
  trace::Record r;
  try {
    while (reader.next(r)) shaper.on_record(r);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("reading", file, reader.records_read());
  }
  return shaper.finish(file, reread_pattern_steps);
}

}  // namespace streamhaz::analysis
