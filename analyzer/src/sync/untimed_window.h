// Why the judged steps hold no GPU times, where the tracer says why: in a program without a
// step range it times the steps it counts from the program's repeating calls and then stops
// (the trace's `gpu_times_steps_from_pattern`), and check may find longer steps than it did
// (a loop inside a step: micro-batches that each synchronise) or judge steps after the timed ones.
#pragma once

#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "sync/sync_window.h"

namespace streamhaz::analysis {

// One sentence for the first trace whose judged window began after its GPU times ended by the
// pattern, saying what the tracer took for a step, what check judged and what to do; empty
// where no trace says so.
std::string untimed_window_reason(const std::vector<RankRecords>& run, const std::vector<JudgedWindow>& judged);

}  // namespace streamhaz::analysis
