#include "replay/pattern_steps.h"

#include <algorithm>

namespace streamhaz::analysis {
namespace {

// The tokens looked at are the trace's last ones (a training loop repeats to its end, but for
// a teardown), and the periods tried are the distances from a few of them to their next repeats:
// the work is a few scans of that window whatever the trace's length.
constexpr size_t kWindow = size_t(1) << 14;
constexpr size_t kRepeatsPerAnchor = 64;

// Distances from tokens at a quarter, half and three quarters of [from, n) to their repeats.
std::vector<size_t> candidate_periods(const std::vector<PatternToken>& tokens, size_t from) {
  const size_t n = tokens.size(), m = n - from;
  std::vector<size_t> out;
  for (size_t anchor : {from + m / 4, from + m / 2, from + 3 * m / 4}) {
    size_t found = 0;
    for (size_t j = anchor + 1; j < n && j - anchor <= m / 2 && found < kRepeatsPerAnchor; ++j)
      if (tokens[j].key == tokens[anchor].key) {
        out.push_back(j - anchor);
        ++found;
      }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

bool pattern_token(const trace::Record& r, uint64_t record, PatternToken& out) {
  trace::StepToken token;
  if (!trace::step_token(r, token)) return false;
  out = {record, token.key, token.host_sync};
  return true;
}

void add_call_site(PatternToken& token, trace::CallsiteId callsite) {
  token.key = trace::with_call_site(token.key, callsite);
}

void PatternReader::feed(const trace::Record& r, uint64_t index) {
  if (const auto* ref = std::get_if<trace::StackRef>(&r)) {
    if (!tokens_.empty() && ref->seq == token_seq_) add_call_site(tokens_.back(), ref->callsite);
    return;
  }
  if (trace::is_stack_record(r)) return;
  if (PatternToken token; pattern_token(r, index, token)) {
    tokens_.push_back(token);
    token_seq_ = trace::api_seq(r);
  }
}

PatternSteps find_pattern_steps(const std::vector<PatternToken>& tokens) {
  PatternSteps out;
  const size_t n = tokens.size();
  if (n < 2) return out;
  const size_t from = n > kWindow ? n - kWindow : 0;
  // Stretches where every token equals the one a period later, two periods long at least. The
  // one covering the most wins, ties going to the shorter period (a multiple of the period covers
  // as much). A stretch of one call repeated is no step pattern: it is periodic for every period,
  // and initialisations are full of them (NCCL's set-up synchronises one stream dozens of times
  // from one call site; a broadcast per parameter of one size).
  size_t best_period = 0, best_cover = 0, best_end = 0;
  for (size_t p : candidate_periods(tokens, from)) {
    size_t run = 0;
    for (size_t i = from; i + p <= n; ++i) {
      if (i + p < n && tokens[i].key == tokens[i + p].key) {
        ++run;
        continue;
      }
      if (run >= p && run + p > best_cover) {  // the stretch [i - run, i + p) ended
        const size_t first = i - run;
        bool one_call = true;
        for (size_t k = first + 1; k < first + p && one_call; ++k) one_call = tokens[k].key == tokens[first].key;
        if (!one_call) {
          best_period = p;
          best_cover = run + p;
          best_end = i + p;
        }
      }
      run = 0;
    }
  }
  if (!best_period) return out;
  // The stretch may reach back past the tokens looked at: it starts where the loop does, so
  // that the steps are counted from the first and the warm-up is the loop's own first step.
  size_t first = best_end - best_cover;
  while (first > 0 && tokens[first - 1].key == tokens[first - 1 + best_period].key) --first;
  size_t offset = 0;
  for (size_t i = first; i < first + best_period; ++i)
    if (tokens[i].host_sync) offset = i + 1 - first;
  offset %= best_period;
  out.period = best_period;
  for (size_t k = first + offset; k < best_end; k += best_period) {
    // Right after the host synchronisation that ended the step before: the next step's first
    // kernels come before its first collective.
    const bool after_sync = k > 0 && tokens[k - 1].host_sync;
    out.starts.push_back(after_sync ? tokens[k - 1].record + 1 : tokens[k].record);
  }
  out.end = tokens[best_end - 1].record + 1;
  if (out.starts.size() < 2) out = {};  // one step is no pattern
  return out;
}

}  // namespace streamhaz::analysis
