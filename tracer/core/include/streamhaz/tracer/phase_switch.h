// When the exact tier switches between its learn and steady phases (tracer/exact/
// instrumentation_phases.h does the switching): launches are counted in windows of kWindow; a
// window in which the launch memo served at least kSteadyServed launches ends learning, and a
// steady window in which it served fewer than kLearnBelow starts learning again (the program
// entered a new phase: evaluation, new shapes), at most kMaxLearnAgain times.
// Not thread-safe: the caller holds its lock.
#pragma once

#include <cstdint>

namespace streamhaz::tracer {

class PhaseSwitch {
 public:
  static constexpr uint64_t kWindow = 256;
  static constexpr uint64_t kSteadyServed = 128;  // half of a window
  static constexpr uint64_t kLearnBelow = 64;     // a quarter of a window
  static constexpr unsigned kMaxLearnAgain = 4;

  bool learning() const { return learning_; }
  // One program launch, served by the memo or not. True when the window it closed asks for the
  // other phase; the caller switches and then calls switched().
  bool launched(bool served_by_memo);
  void switched();

 private:
  bool learning_ = true;
  uint64_t in_window_ = 0, served_ = 0;
  unsigned learned_again_ = 0;
};

}  // namespace streamhaz::tracer
