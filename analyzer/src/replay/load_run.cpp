// Loading a run into memory for the replay and the over-synchronisation pass.
#include <set>

#include "analysis_parts.h"
#include "replay/pattern_steps.h"
#include "streamhaz/analysis/replay.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

std::vector<RankRecords> load_run(const std::vector<std::string>& trace_files, uint64_t max_records, bool* cut,
                                  std::vector<std::string>* warnings) {
  std::vector<RankRecords> run;
  std::set<int> declared, taken;
  std::vector<int> wanted;
  for (const std::string& file : trace_files) {
    trace::TraceReader reader(file);
    RankRecords r;
    r.path = file;
    wanted.push_back(reader.rank());
    if (reader.rank() >= 0) declared.insert(reader.rank());
    trace::Record rec;
    uint64_t operations = 0;
    PatternReader pattern;  // steps where the trace has no step range
    try {
      // Stack records order nothing, and a StackRef's seq is another record's: the replay keeps none.
      while (r.records.size() < max_records && reader.next(rec)) {
        pattern.feed(rec, r.records.size());
        if (trace::is_stack_record(rec)) continue;
        operations += trace::op_common(rec) != nullptr;
        r.records.push_back(std::move(rec));
      }
      if (r.records.size() >= max_records && reader.next(rec) && cut) *cut = true;
    } catch (const std::bad_alloc&) {
      throw OutOfMemory("reading", file, reader.records_read());
    }
    r.truncated = reader.truncated();
    const PatternSteps steps = find_pattern_steps(pattern.tokens());
    r.pattern_step_starts = steps.starts;
    r.pattern_steps_end = steps.end;
    r.pattern_period = steps.period;
    if (warnings) {
      TraceSummary s;
      s.path = file;
      s.records = reader.records_read();
      s.operations = operations;
      s.truncated = reader.truncated();
      s.truncation = reader.truncation();
      s.records_lost = reader.records_lost();
      s.strings_cut_note = reader.strings_cut_note();
      trace_warnings(s, *warnings);
    }
    run.push_back(std::move(r));
  }
  // The numbering analyze() uses: a missing or repeated rank gets the lowest number free.
  int next_free = 0;
  for (size_t i = 0; i < run.size(); ++i) {
    int rank = wanted[i];
    if (rank < 0 || taken.count(rank)) {
      while (declared.count(next_free) || taken.count(next_free)) ++next_free;
      rank = next_free;
    }
    taken.insert(rank);
    run[i].rank = rank;
  }
  return run;
}

bool wildcard_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace streamhaz::analysis
