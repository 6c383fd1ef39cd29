// The over-synchronisation pass's first read of a trace (sync_window.h): where its steps start
// and how much each holds, record by record. A check feeds it the race check's own read
// (AnalysisOptions::observe_records), so that the pass need not read every trace once more.
#pragma once

#include <string>

#include "replay/pattern_steps.h"
#include "replay/steps.h"
#include "streamhaz/analysis/analyze.h"
#include "sync/step_segments.h"
#include "sync/trace_shape.h"

namespace streamhaz::analysis {

class ShapeReader : public RecordObserver {
 public:
  ShapeReader(const std::string& step_range, TimingKeep keep) : finder_(step_range), keep_(keep) {}
  void on_record(const trace::Record& r) override;
  // The shape, once every record of `file` was seen. Steps from the repeating pattern are shaped
  // from the read's sums, or by reading `file` again where those cannot say (step_segments.h) or
  // `reread_pattern_steps` asks for it (the reference the tests hold the sums to).
  TraceShape finish(const std::string& file, bool reread_pattern_steps);

 private:
  void on_plain(const trace::Timing* tm);  // an access or GPU time
  bool keeps_timing_of(int step, const trace::Timing& tm);

  TraceShape shape_;
  StepFinder finder_;
  int current_ = -1;       // the step the records belong to (from its first call on)
  PatternReader pattern_;  // for a trace without the range
  StepSegments segments_;  // ...and its records summed between the places a step may start
  bool after_token_ = false;
  TimingKeep keep_;
  std::vector<uint64_t> records_before_;  // per step, the records of the steps before it
  int first_timed_ = -1;                  // the first step after the warm-up with a GPU time
};

// Reads `file` through a ShapeReader.
TraceShape shape_of(const std::string& file, const std::string& step_range, TimingKeep keep,
                    bool reread_pattern_steps);

}  // namespace streamhaz::analysis
