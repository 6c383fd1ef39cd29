#include "sync/untimed_window.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>

namespace streamhaz::analysis {

namespace {

struct PatternClose {
  uint64_t period = 0, periods = 0, seq = 0;
};

// The trace's `gpu_times_steps_from_pattern` (a Meta record the tracer writes once).
std::optional<PatternClose> pattern_close(const RankRecords& rr) {
  for (const trace::Record& r : rr.records) {
    const auto* m = std::get_if<trace::Meta>(&r);
    if (!m || m->json.find("gpu_times_steps_from_pattern") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(m->json, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    const auto p = j.find("gpu_times_steps_from_pattern");
    if (p == j.end() || !p->is_object()) continue;
    auto number = [&](const char* key) {
      const auto v = p->find(key);
      return v != p->end() && v->is_number_integer() && v->get<int64_t>() > 0 ? v->get<uint64_t>() : 0;
    };
    PatternClose c{number("period"), number("periods"), number("seq")};
    if (c.period && c.seq) return c;
  }
  return std::nullopt;
}

}  // namespace

std::string untimed_window_reason(const std::vector<RankRecords>& run, const std::vector<JudgedWindow>& judged) {
  for (size_t i = 0; i < run.size() && i < judged.size(); ++i) {
    const JudgedWindow& w = judged[i];
    const std::optional<PatternClose> close = pattern_close(run[i]);
    if (!close || !w.from_steps || w.first_seq <= close->seq) continue;
    const std::string steps = w.first_step == w.last_step ? fmt::format("step {}", w.first_step)
                                                          : fmt::format("steps {} to {}", w.first_step, w.last_step);
    std::string what;
    if (w.pattern_period == close->period)
      what = fmt::format("check judges {} of {}, issued after them", steps, w.steps);
    else if (w.pattern_period)
      what = fmt::format("check found steps of {} calls (a loop inside a step, such as micro-batches, repeats sooner) "
                         "and judges {} of {}, issued after them",
                         w.pattern_period, steps, w.steps);
    else
      what = fmt::format("check judges {} of {} from the NVTX range, issued after them", steps, w.steps);
    return fmt::format(
        "{}: the tracer took {} collectives and host synchronisations for a step and timed {} repeats of them, up to "
        "call #{}; {}: put the training step in an NVTX range 'step' (or name it with --step-range) and trace "
        "again, or trace with `streamhaz run --gpu-times all`",
        run[i].path, close->period, close->periods, close->seq, what);
  }
  return {};
}

}  // namespace streamhaz::analysis
