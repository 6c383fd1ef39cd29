#include "streamhaz/analysis/check.h"

#include <memory>

#include "streamhaz/analysis/attribution.h"
#include "sync/in_parallel.h"
#include "sync/oversync.h"
#include "sync/shape_reader.h"

namespace streamhaz::analysis {

namespace {

// The shaping and an observer the caller gave, both fed the same records.
class BothObservers : public RecordObserver {
 public:
  BothObservers(RecordObserver* a, RecordObserver* b) : a_(a), b_(b) {}
  void on_record(const trace::Record& r) override {
    a_->on_record(r);
    if (b_) b_->on_record(r);
  }

 private:
  RecordObserver* a_;
  RecordObserver* b_;
};

}  // namespace

CheckResult check(const CheckRequest& request) {
  CheckResult out;
  // The over-synchronisation pass learns each trace's steps from the race check's read of it.
  std::vector<std::unique_ptr<ShapeReader>> shapers(request.files.size());
  std::vector<std::unique_ptr<BothObservers>> both(request.files.size());
  AnalysisOptions race_check = request.analysis;
  if (request.sync)
    race_check.observe_records = [&](size_t i) -> RecordObserver* {
      shapers[i] = std::make_unique<ShapeReader>(
          request.sync->replay.step_range, TimingKeep{request.sync->warmup_steps, request.sync->window_records});
      if (!request.analysis.observe_records) return shapers[i].get();
      both[i] = std::make_unique<BothObservers>(shapers[i].get(), request.analysis.observe_records(i));
      return both[i].get();
    };
  out.analysis = analyze(request.files, race_check);
  if (request.sync) {
    std::vector<TraceShape> shapes(shapers.size());  // a trace's steps may take a second read of it
    for_each_index(shapers.size(), request.analysis.jobs,
                   [&](size_t i) { shapes[i] = shapers[i]->finish(request.files[i], false); });
    // What the readers summed to find the steps is spent: free it before the pass holds its windows.
    both.clear();
    shapers.clear();
    SyncReport rep = analyze_sync(request.files, request.analysis, *request.sync, &out.analysis.findings, &shapes);
    for (Finding& f : rep.findings) out.analysis.findings.push_back(std::move(f));
    for (std::string& w : rep.warnings) out.analysis.warnings.push_back(std::move(w));
    out.analysis.sync_notes = std::move(rep.notes);
    out.analysis.sync_sites = std::move(rep.verdicts);
    out.analysis.minimal_sync = std::move(rep.advice);
    out.analysis.sync_scope = std::move(rep.scope);
    out.minimal_sync = std::move(rep.minimal);
    out.sync_ran = rep.ran;
  }
  // Stacks, allocation sites and stream origins of what is reported (traces with stacks).
  attach_stacks(out.analysis);
  return out;
}

}  // namespace streamhaz::analysis
