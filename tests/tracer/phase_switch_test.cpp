// The exact tier's learn/steady switch: window accounting only (no GPU).
#include <catch2/catch.hpp>

#include "streamhaz/tracer/phase_switch.h"

using streamhaz::tracer::PhaseSwitch;

namespace {
// Feeds one window in which the memo served `served` launches; whether it asked to switch.
bool window(PhaseSwitch& p, uint64_t served) {
  bool due = false;
  for (uint64_t i = 0; i < PhaseSwitch::kWindow; ++i) {
    const bool asked = p.launched(i < served);
    CHECK((!asked || i + 1 == PhaseSwitch::kWindow));  // only a closing window asks
    due |= asked;
  }
  return due;
}
}  // namespace

TEST_CASE("phase switch: learning ends once the memo serves half of a window") {
  PhaseSwitch p;
  CHECK(p.learning());
  CHECK_FALSE(window(p, PhaseSwitch::kSteadyServed - 1));
  CHECK(window(p, PhaseSwitch::kSteadyServed));
  p.switched();
  CHECK_FALSE(p.learning());
}

TEST_CASE("phase switch: steady goes back to learning when the memo serves few launches, a bounded number of times") {
  PhaseSwitch p;
  REQUIRE(window(p, PhaseSwitch::kWindow));
  p.switched();
  CHECK_FALSE(window(p, PhaseSwitch::kLearnBelow));  // a quarter served: stay steady
  for (unsigned again = 0; again < PhaseSwitch::kMaxLearnAgain; ++again) {
    REQUIRE(window(p, 0));
    p.switched();
    REQUIRE(p.learning());
    REQUIRE(window(p, PhaseSwitch::kWindow));
    p.switched();
  }
  CHECK_FALSE(window(p, 0));  // the program keeps changing: stay steady, unserved launches run bare
  CHECK_FALSE(p.learning());
}

TEST_CASE("phase switch: a switch starts a fresh window") {
  PhaseSwitch p;
  for (uint64_t i = 0; i < PhaseSwitch::kWindow / 2; ++i) p.launched(true);
  p.switched();  // steady now, half-way through the old window
  for (uint64_t i = 0; i + 1 < PhaseSwitch::kWindow; ++i) REQUIRE_FALSE(p.launched(false));
  CHECK(p.launched(false));  // the window closes only after kWindow launches of its own
}
