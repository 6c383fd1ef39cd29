#include "sync/sync_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "analysis_parts.h"
#include "sync/in_parallel.h"
#include "sync/shape_reader.h"
#include "streamhaz/analysis/replay.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

namespace {

// Which steps fit the budget: from the first after the warm-up, while records and
// synchronisations fit (at least one step).
JudgedWindow choose(const TraceShape& t, const WindowBudget& b) {
  JudgedWindow w;
  w.steps = static_cast<int>(t.steps.size());
  if (t.steps.empty()) return w;
  size_t first = t.steps.size() > static_cast<size_t>(b.warmup_steps) ? b.warmup_steps : 0;
  // Where some steps are timed (the tracer times whole steps by default), the judged ones are
  // those: the costs come from their GPU times.
  const bool timed = std::any_of(t.steps.begin() + first, t.steps.end(), [](const StepShape& s) { return s.timed > 0; });
  while (timed && t.steps[first].timed == 0) ++first;
  size_t last = first;
  uint64_t records = t.steps[first].records, syncs = t.steps[first].syncs;
  while (last + 1 < t.steps.size() && records + t.steps[last + 1].records <= b.records &&
         syncs + t.steps[last + 1].syncs <= b.syncs && (!timed || t.steps[last + 1].timed > 0)) {
    ++last;
    records += t.steps[last].records;
    syncs += t.steps[last].syncs;
  }
  w.from_steps = true;
  w.pattern_period = t.pattern_period;
  w.second_read = t.second_read;
  w.first_step = static_cast<int>(first) + 1;
  w.last_step = static_cast<int>(last) + 1;
  // With range edges the window starts where the warm-up ended, so that what a script does
  // between steps (its timing synchronisations) is judged too. Without them a call that is not
  // an operation belongs to no step: the window starts at the step's first operation.
  if (t.range_edges && first > 0) {
    w.first_seq = t.steps[first - 1].last_seq + 1;
    w.first_record = t.steps[first - 1].last_record + 1;
  } else {
    w.first_seq = t.steps[first].first_seq;
    w.first_record = t.steps[first].first_record;
  }
  return w;
}

// Records the judged window keeps from before it: everything but operations and what belongs
// to them (their accesses and GPU times).
bool state_record(const trace::Record& r) {
  return !trace::op_common(r) && !std::holds_alternative<trace::Access>(r) && !std::holds_alternative<trace::Timing>(r);
}

// GPU times are written late, when CUPTI delivers them: those of the window's operations may
// come after its last record. Reads the rest of the trace for them.
// `expected` (when given): how many of them the window's operations have, from the first read; the
// reading stops once they are all in rather than at the trace's end.
void append_late_timings(trace::TraceReader& reader, const std::unordered_set<uint64_t>& kept_ops, RankRecords& rr,
                         const uint64_t* expected = nullptr, uint64_t found = 0) {
  trace::Record r;
  while ((!expected || found < *expected) && reader.next(r))
    if (const auto* t = std::get_if<trace::Timing>(&r); t && kept_ops.count(t->op_seq)) {
      rr.records.push_back(std::move(r));
      ++found;
    }
}

// The same from the first read's kept GPU times (TraceShape::timings): those read at `from` or
// later, up to `expected` in all.
void append_kept_timings(const std::vector<KeptTiming>& kept, uint64_t from, const std::unordered_set<uint64_t>& kept_ops,
                         RankRecords& rr, uint64_t expected, uint64_t found) {
  auto it = std::lower_bound(kept.begin(), kept.end(), from,
                             [](const KeptTiming& k, uint64_t index) { return k.index < index; });
  for (; found < expected && it != kept.end(); ++it)
    if (kept_ops.count(it->timing.op_seq)) {
      rr.records.emplace_back(it->timing);
      ++found;
    }
}

// The run from its start, as far as the budgets allow (a trace without steps).
RankRecords load_prefix(const std::string& file, const WindowBudget& b, bool& cut) {
  RankRecords rr;
  rr.path = file;
  trace::TraceReader reader(file);
  trace::Record r;
  uint64_t syncs = 0;
  std::unordered_set<uint64_t> kept_ops;
  try {
    while (reader.next(r)) {
      if (trace::is_stack_record(r)) continue;
      if (rr.records.size() >= b.records || (sync_kind(r) && ++syncs > b.syncs)) {
        cut = true;
        append_late_timings(reader, kept_ops, rr);
        break;
      }
      if (const trace::OpCommon* op = trace::op_common(r)) kept_ops.insert(op->seq);
      rr.records.push_back(std::move(r));
    }
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("reading", file, reader.records_read());
  }
  rr.truncated = reader.truncated();
  rr.records.shrink_to_fit();  // the pass keeps the window to the end: no growth slack
  return rr;
}

RankRecords load_window(const std::string& file, const TraceShape& shape, JudgedWindow& w, bool read_late_timings,
                        bool& cut) {
  RankRecords rr;
  rr.path = file;
  const StepShape& last = shape.steps[w.last_step - 1];
  // A graph captured before the window may be launched in it: then nothing is left out.
  const bool keep_prefix = !shape.capture_records.empty() && shape.capture_records.front() < w.first_record;
  std::set<trace::StreamId> fenced;
  trace::TraceReader reader(file);
  trace::Record r;
  uint64_t index = 0;
  bool past = false;  // the window's last operation was read
  int next_start = w.first_step - 1;  // the judged step whose start comes next
  std::unordered_set<uint64_t> kept_ops;
  // The GPU times of the window's operations (seqs from w.first_seq to the last step's last),
  // counted in the first read: once all are in, the rest of the trace need not be read.
  const int first = w.first_step - 1, end = w.last_step;
  uint64_t expected = 0, timed = 0;
  for (int k = first; k < end; ++k) expected += shape.steps[k].timed + (k + 1 < end ? shape.steps[k].timed_after : 0);
  if (shape.range_edges && first > 0 && w.first_seq > shape.steps[first - 1].last_seq)
    expected += shape.steps[first - 1].timed_after;
  try {
    while (reader.next(r)) {
      if (trace::is_stack_record(r)) continue;
      const uint64_t at = index++;
      const trace::OpCommon* op = trace::op_common(r);
      if (op && past) {
        cut = true;
        // Left-out operations' times are not counted: with a kept prefix, read to the end.
        if (keep_prefix) append_late_timings(reader, kept_ops, rr);
        else if (shape.timings_kept && !read_late_timings) append_kept_timings(shape.timings, at, kept_ops, rr, expected, timed);
        else append_late_timings(reader, kept_ops, rr, &expected, timed);
        break;
      }
      if (at < w.first_record && !keep_prefix && !state_record(r)) {
        if (op) {
          ++w.left_out_operations;
          if (fenced.insert(op->stream).second) w.fences.push_back(StartFence{rr.records.size(), op->stream, op->seq});
        }
        continue;
      }
      // A GPU time of a left-out operation would stand alone.
      if (const auto* t = std::get_if<trace::Timing>(&r)) {
        if (!kept_ops.count(t->op_seq)) continue;
        if (t->op_seq >= w.first_seq && t->op_seq <= last.last_seq) ++timed;
      }
      if (op) kept_ops.insert(op->seq);
      if (trace::api_seq(r) == last.last_seq) past = true;
      // The replay measures the judged steps where the pattern found them.
      if (shape.pattern_period && next_start < w.last_step && at == shape.steps[next_start].first_record) {
        rr.pattern_step_starts.push_back(rr.records.size());
        ++next_start;
      }
      rr.records.push_back(std::move(r));
      if (shape.pattern_period && at == last.last_record) rr.pattern_steps_end = rr.records.size();
    }
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("reading", file, reader.records_read());
  }
  rr.truncated = reader.truncated();
  if (shape.pattern_period && !rr.pattern_step_starts.empty()) rr.pattern_period = shape.pattern_period;
  else rr.pattern_step_starts.clear();
  rr.records.shrink_to_fit();  // the pass keeps the window to the end: no growth slack
  return rr;
}

}  // namespace

std::vector<RankRecords> load_judged_windows(const std::vector<std::string>& files, const WindowBudget& budget,
                                             std::vector<JudgedWindow>& windows,
                                             const std::vector<TraceShape>* shapes) {
  std::vector<RankRecords> run(files.size());
  windows.assign(files.size(), JudgedWindow{});
  for_each_index(files.size(), budget.jobs, [&](size_t i) {
    const std::string& file = files[i];
    TraceShape read;
    if (!shapes)
      read = shape_of(file, budget.step_range, TimingKeep{budget.warmup_steps, budget.records}, budget.reread_pattern_steps);
    const TraceShape& shape = shapes ? (*shapes)[i] : read;
    JudgedWindow w = choose(shape, budget);
    // Each trace's own `cut` (read on several threads).
    run[i] = w.from_steps ? load_window(file, shape, w, budget.read_late_timings, w.cut)
                          : load_prefix(file, budget, w.cut);
    windows[i] = std::move(w);
  });
  // The numbering load_run and analyze() use.
  std::vector<RankRecords> numbered = load_run(files, 0);
  for (size_t i = 0; i < run.size(); ++i) run[i].rank = numbered[i].rank;
  return run;
}

bool any_window_cut(const std::vector<JudgedWindow>& windows) {
  return std::any_of(windows.begin(), windows.end(), [](const JudgedWindow& w) { return w.cut; });
}

std::string describe_windows(const std::vector<JudgedWindow>& windows, const WindowBudget& budget) {
  std::set<std::tuple<int, int, int>> shapes;
  std::set<size_t> periods;  // of windows whose steps come from a repeating pattern
  bool prefix = false, ranged = false;
  for (const JudgedWindow& w : windows) {
    if (w.from_steps) shapes.insert({w.first_step, w.last_step, w.steps});
    else prefix = true;
    if (w.from_steps && w.pattern_period) periods.insert(w.pattern_period);
    if (w.from_steps && !w.pattern_period) ranged = true;
  }
  std::vector<std::string> parts;
  for (const auto& [a, b, n] : shapes)
    parts.push_back(fmt::format("{} of {}", a == b ? fmt::format("step {}", a) : fmt::format("steps {} to {}", a, b), n));
  std::string text;
  if (!parts.empty()) {
    text = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) text += ", " + parts[i];
    std::string source;
    if (ranged) source = fmt::format("NVTX range '{}'", budget.step_range);
    if (!periods.empty()) {
      std::string sizes;
      for (size_t p : periods) sizes += (sizes.empty() ? "" : "/") + std::to_string(p);
      source += fmt::format("{}the repeating pattern of {} collectives and host synchronisations{}",
                            ranged ? "; elsewhere " : "", sizes,
                            ranged ? "" : fmt::format(", no NVTX range '{}'", budget.step_range));
    }
    text += " (" + source;
    const bool warm = std::any_of(windows.begin(), windows.end(),
                                  [&](const JudgedWindow& w) { return w.from_steps && w.first_step > 1; });
    if (warm) text += fmt::format(", the first {} taken as warm-up", budget.warmup_steps == 1 ? std::string("step")
                                                                                             : fmt::format("{} steps", budget.warmup_steps));
    text += ")";
  }
  if (prefix) text += (text.empty() ? "" : "; ") + std::string("the run's start in traces without steps");
  return text;
}

}  // namespace streamhaz::analysis
