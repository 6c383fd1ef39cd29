// GPU timestamps of one step: the step itself, the compute intervals on the compute stream and
// the communication intervals (whole flushes) on the reduction stream, from which the step time
// and the share of communication hidden behind compute follow.
#pragma once

#include <cuda_runtime.h>

#include <vector>

namespace reducer {

struct Interval {
  float begin_ms;
  float end_ms;
};

struct StepTiming {
  float step_ms = 0;
  float compute_ms = 0;
  float comm_ms = 0;
  float overlapped_comm_ms = 0;  // communication time during which compute was running
};

// Length of the parts of `comm` covered by `compute`; both lists are disjoint intervals.
float overlapped_length(const std::vector<Interval>& comm, const std::vector<Interval>& compute);

class StepTimeline {
 public:
  StepTimeline(int max_compute_intervals, int max_comm_intervals);
  ~StepTimeline();
  StepTimeline(const StepTimeline&) = delete;
  StepTimeline& operator=(const StepTimeline&) = delete;

  void begin_step(cudaStream_t stream);
  void end_step(cudaStream_t stream);
  void compute_begin(cudaStream_t stream);
  void compute_end(cudaStream_t stream);
  void comm_begin(cudaStream_t stream);
  void comm_end(cudaStream_t stream);

  // Call once the step's work has completed.
  StepTiming collect() const;

 private:
  struct EventPairs {
    std::vector<cudaEvent_t> begins, ends;
    int used = 0;
  };
  static void record(std::vector<cudaEvent_t>& events, int index, cudaStream_t stream);
  std::vector<Interval> intervals(const EventPairs& pairs) const;

  cudaEvent_t step_begin_ = nullptr, step_end_ = nullptr;
  EventPairs compute_, comm_;
};

// Step time median and overlap share over the steps after the warm-up.
struct TimingSummary {
  double step_ms_median = 0;
  double compute_ms_median = 0;
  double comm_ms_median = 0;
  double overlap_share = 0;  // overlapped communication time / communication time
};
TimingSummary summarize(const std::vector<StepTiming>& measured_steps);

}  // namespace reducer
