// The steps a site's cost is replayed on (docs/sync-and-replay.md, "Cost and window"): the first
// few judged steps of every rank. Each site is replayed without it (or with the minimal waits
// instead), and each race at a few slowdowns; on the whole judged window that cost sites x
// window. On a sample of steps it costs sites x a few steps, whatever the window holds. A
// training loop's steps repeat, so the change a site makes to one step is the change it makes to
// each; the stall is still measured over every judged step.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "streamhaz/analysis/replay.h"
#include "sync/pair_check.h"

namespace streamhaz::analysis {

struct JudgedWindow;

constexpr int kCostSampleSteps = 3;

// The sample, or nothing where every rank's window holds at most `steps` steps (the window is
// then its own sample). Every rank is cut after its `steps`-th step (collectives stay matched: a
// training loop's steps issue the same ones); GPU times of the kept operations stay.
std::vector<RankRecords> sample_steps(const std::vector<RankRecords>& run, const std::string& step_range, int steps);

// The operations of a run (its start fences in `variants` count), to keep the pairs whose two
// operations it holds. Built once: every site that protects something asks it.
class OpsWithin {
 public:
  OpsWithin() = default;
  OpsWithin(const std::vector<RankRecords>& run, const RunVariants& variants);
  PairSet filter(const PairSet& pairs) const;

 private:
  std::vector<std::pair<int, uint64_t>> ops_;  // (rank, seq), sorted
};

// What the costs are replayed on: the sample with its own fit and variants, or the window's.
struct CostRun {
  const std::vector<RankRecords>* run = nullptr;
  const Replayer* replay = nullptr;
  const Schedule* unchanged = nullptr;  // replay->run_unchanged()
  const RunVariants* variants = nullptr;
  bool sampled = false;  // a sample of the window's steps
  int steps = 0;         // steps per rank in it (sampled only)
  const OpsWithin* ops = nullptr;  // the sample's operations (sampled only)
};

// Holds a sample's records, fit and variants while the pass uses them.
class CostSample {
 public:
  // `window`: the judged run, its replay, unchanged schedule and variants. Fits the sample where
  // the window has more steps than it; else `get()` is the window's.
  CostSample(const CostRun& window, const std::string& step_range, const ReplayOptions& options,
             const std::vector<JudgedWindow>* judged);
  const CostRun& get() const { return use_; }

 private:
  std::vector<RankRecords> run_;
  std::unique_ptr<Replayer> replay_;
  Schedule unchanged_;
  RunVariants variants_;
  OpsWithin ops_;
  CostRun use_;
};

}  // namespace streamhaz::analysis
