#include "step_timing.hpp"

#include <algorithm>

#include "cuda_check.hpp"

namespace reducer {

float overlapped_length(const std::vector<Interval>& comm, const std::vector<Interval>& compute) {
  float total = 0;
  for (const auto& c : comm)
    for (const auto& k : compute) total += std::max(0.0f, std::min(c.end_ms, k.end_ms) -
                                                              std::max(c.begin_ms, k.begin_ms));
  return total;
}

StepTimeline::StepTimeline(int max_compute_intervals, int max_comm_intervals) {
  auto make = [](std::vector<cudaEvent_t>& events, int count) {
    events.resize(count);
    for (auto& event : events) CUDA_CHECK(cudaEventCreate(&event));
  };
  CUDA_CHECK(cudaEventCreate(&step_begin_));
  CUDA_CHECK(cudaEventCreate(&step_end_));
  make(compute_.begins, max_compute_intervals);
  make(compute_.ends, max_compute_intervals);
  make(comm_.begins, max_comm_intervals);
  make(comm_.ends, max_comm_intervals);
}

StepTimeline::~StepTimeline() {
  for (auto* pairs : {&compute_, &comm_})
    for (auto* events : {&pairs->begins, &pairs->ends})
      for (auto event : *events) cudaEventDestroy(event);
  cudaEventDestroy(step_begin_);
  cudaEventDestroy(step_end_);
}

void StepTimeline::record(std::vector<cudaEvent_t>& events, int index, cudaStream_t stream) {
  if (index >= static_cast<int>(events.size())) fail("internal: step timeline out of events");
  CUDA_CHECK(cudaEventRecord(events[index], stream));
}

void StepTimeline::begin_step(cudaStream_t stream) {
  compute_.used = comm_.used = 0;
  CUDA_CHECK(cudaEventRecord(step_begin_, stream));
}
void StepTimeline::end_step(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(step_end_, stream)); }
void StepTimeline::compute_begin(cudaStream_t stream) { record(compute_.begins, compute_.used, stream); }
void StepTimeline::compute_end(cudaStream_t stream) { record(compute_.ends, compute_.used++, stream); }
void StepTimeline::comm_begin(cudaStream_t stream) { record(comm_.begins, comm_.used, stream); }
void StepTimeline::comm_end(cudaStream_t stream) { record(comm_.ends, comm_.used++, stream); }

std::vector<Interval> StepTimeline::intervals(const EventPairs& pairs) const {
  std::vector<Interval> result;
  for (int i = 0; i < pairs.used; ++i) {
    Interval interval{};
    CUDA_CHECK(cudaEventElapsedTime(&interval.begin_ms, step_begin_, pairs.begins[i]));
    CUDA_CHECK(cudaEventElapsedTime(&interval.end_ms, step_begin_, pairs.ends[i]));
    result.push_back(interval);
  }
  return result;
}

StepTiming StepTimeline::collect() const {
  StepTiming timing;
  CUDA_CHECK(cudaEventElapsedTime(&timing.step_ms, step_begin_, step_end_));
  auto compute = intervals(compute_);
  auto comm = intervals(comm_);
  for (const auto& i : compute) timing.compute_ms += i.end_ms - i.begin_ms;
  for (const auto& i : comm) timing.comm_ms += i.end_ms - i.begin_ms;
  timing.overlapped_comm_ms = overlapped_length(comm, compute);
  return timing;
}

namespace {
double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}
}  // namespace

TimingSummary summarize(const std::vector<StepTiming>& measured_steps) {
  TimingSummary summary;
  std::vector<double> step, compute, comm;
  double comm_total = 0, overlapped_total = 0;
  for (const auto& s : measured_steps) {
    step.push_back(s.step_ms);
    compute.push_back(s.compute_ms);
    comm.push_back(s.comm_ms);
    comm_total += s.comm_ms;
    overlapped_total += s.overlapped_comm_ms;
  }
  summary.step_ms_median = median(step);
  summary.compute_ms_median = median(compute);
  summary.comm_ms_median = median(comm);
  summary.overlap_share = comm_total > 0 ? overlapped_total / comm_total : 0;
  return summary;
}

}  // namespace reducer
