// Training steps of a trace without a step range (no NVTX `step`, no ProfilerStep#N): the
// repeating pattern of its collectives and host synchronisations (their tokens:
// streamhaz/trace/step_pattern.h). After an initialisation that does not repeat (process-group
// set-up, parameter broadcast), the trace's tail is periodic in them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "streamhaz/trace/records.h"
#include "streamhaz/trace/step_pattern.h"

namespace streamhaz::analysis {

// One collective or host synchronisation of a trace: where it is and what it is.
struct PatternToken {
  uint64_t record = 0;  // index among the trace's records (stack records not counted)
  uint64_t key = 0;     // equal for the same call: kind, size and communicator for collectives
  bool host_sync = false;
};

// The token of a record, if it is a collective or a host synchronisation.
bool pattern_token(const trace::Record& r, uint64_t record, PatternToken& out);
// The call's stack (its StackRef's call site), where the trace has stacks: a loss read and a
// timing synchronisation are then different calls, as they are to the program.
void add_call_site(PatternToken& token, trace::CallsiteId callsite);

struct PatternSteps {
  size_t period = 0;              // tokens per step; 0: no repeating pattern
  std::vector<uint64_t> starts;   // the record index each step starts at
  uint64_t end = 0;               // records from here on (a teardown) belong to no step
};

// A trace's tokens, record by record, stack records included (the StackRef that follows a
// token's call gives its call site). `index` counts the trace's records without stack records.
class PatternReader {
 public:
  void feed(const trace::Record& r, uint64_t index);
  const std::vector<PatternToken>& tokens() const { return tokens_; }

 private:
  std::vector<PatternToken> tokens_;
  uint64_t token_seq_ = 0;  // the last token's call
};

// The shortest period that covers the most of the trace's tail (at least two whole periods);
// steps start right after the period's last host synchronisation (a step ends waiting for its
// loss), else at the periodic stretch's first token. Steps run to the next start, the last to
// the stretch's end. Periods are found among the trace's last tokens (a loop repeats to its
// end); the stretch is then followed back to where the loop starts.
PatternSteps find_pattern_steps(const std::vector<PatternToken>& tokens);

}  // namespace streamhaz::analysis
