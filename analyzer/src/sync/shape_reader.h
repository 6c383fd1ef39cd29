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
  explicit ShapeReader(const std::string& step_range) : finder_(step_range) {}
  void on_record(const trace::Record& r) override;
  // The shape, once every record of `file` was seen. Steps from the repeating pattern are shaped
  // from the read's sums, or by reading `file` again where those cannot say (step_segments.h) or
  // `reread_pattern_steps` asks for it (the reference the tests hold the sums to).
  TraceShape finish(const std::string& file, bool reread_pattern_steps);

 private:
  void on_plain(const trace::Timing* tm);  // an access or GPU time

  TraceShape shape_;
  StepFinder finder_;
  int current_ = -1;       // the step the records belong to (from its first call on)
  PatternReader pattern_;  // for a trace without the range
  StepSegments segments_;  // ...and its records summed between the places a step may start
  bool after_token_ = false;
};

// Reads `file` through a ShapeReader.
TraceShape shape_of(const std::string& file, const std::string& step_range, bool reread_pattern_steps);

}  // namespace streamhaz::analysis
