#include "streamhaz/tracer/phase_switch.h"

namespace streamhaz::tracer {

bool PhaseSwitch::launched(bool served_by_memo) {
  served_ += served_by_memo;
  if (++in_window_ < kWindow) return false;
  const uint64_t served = served_;
  in_window_ = served_ = 0;
  if (learning_) return served >= kSteadyServed;
  return served < kLearnBelow && learned_again_ < kMaxLearnAgain;
}

void PhaseSwitch::switched() {
  if (!learning_) ++learned_again_;
  learning_ = !learning_;
  in_window_ = served_ = 0;
}

}  // namespace streamhaz::tracer
