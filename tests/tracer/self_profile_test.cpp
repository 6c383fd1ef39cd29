#include "streamhaz/tracer/self_profile.h"

#include <catch2/catch.hpp>
#include <set>
#include <thread>

using namespace streamhaz::tracer;

namespace {

// This thread's and every thread's counters for one phase, from the report.
uint64_t total_calls(const nlohmann::json& profile, const std::string& phase) {
  for (const auto& row : profile["phases"])
    if (row["name"] == phase) return row["calls"].get<uint64_t>();
  return 0;
}

struct ProfileOn {
  ProfileOn() { enable_self_profile(true); }
  ~ProfileOn() { enable_self_profile(false); }
};

}  // namespace

TEST_CASE("self profile: off, a phase timer counts nothing") {
  enable_self_profile(false);
  const uint64_t before = total_calls(self_profile_json(), "write");
  { PhaseTimer t(Phase::Write); }
  CHECK(total_calls(self_profile_json(), "write") == before);
}

TEST_CASE("self profile: on, each phase counts its calls and time, per thread") {
  ProfileOn on;
  const nlohmann::json before = self_profile_json();
  {
    PhaseTimer t(Phase::Compress);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::thread other([] { PhaseTimer t(Phase::Compress); });
  other.join();
  const nlohmann::json after = self_profile_json();
  CHECK(total_calls(after, "compress") == total_calls(before, "compress") + 2);
  uint64_t ns = 0;
  for (const auto& row : after["phases"])
    if (row["name"] == "compress") ns = row["ns"].get<uint64_t>();
  CHECK(ns >= 2'000'000);
  // The thread that ended keeps its counters, under its own id.
  CHECK(after["threads"].size() >= 2);
}

TEST_CASE("self profile: a timed lock counts the wait and the holding, and locks") {
  ProfileOn on;
  std::mutex mu;
  const nlohmann::json before = self_profile_json();
  int shared = 0;
  std::thread a([&] {
    for (int i = 0; i < 1000; ++i) {
      TimedLock lock(mu);
      ++shared;
    }
  });
  for (int i = 0; i < 1000; ++i) {
    TimedLock lock(mu);
    ++shared;
  }
  a.join();
  CHECK(shared == 2000);
  const nlohmann::json after = self_profile_json();
  CHECK(total_calls(after, "lock_wait") == total_calls(before, "lock_wait") + 2000);
  CHECK(total_calls(after, "recorder") == total_calls(before, "recorder") + 2000);
}

TEST_CASE("self profile: every phase has a name, a description, and a known parent") {
  const nlohmann::json profile = self_profile_json();
  REQUIRE(profile["phases"].size() == kPhaseCount);
  std::set<std::string> names;
  for (const auto& row : profile["phases"]) names.insert(row["name"].get<std::string>());
  CHECK(names.size() == kPhaseCount);
  for (const auto& row : profile["phases"]) {
    CHECK(row["what"].get<std::string>().size() > 10);
    const std::string inside = row["inside"];
    CHECK((inside.empty() || names.count(inside)));
  }
}

TEST_CASE("self profile: time inside training steps is counted apart, after the warm-up steps") {
  ProfileOn on;
  auto step_calls = [](const nlohmann::json& p) {
    for (const auto& row : p["phases"])
      if (row["name"] == "nvtx") return row["step_calls"].get<uint64_t>();
    return uint64_t{0};
  };
  const nlohmann::json before = self_profile_json();
  for (int step = 0; step < kProfileWarmupSteps + 3; ++step) {
    profile_step_began(step);
    { PhaseTimer t(Phase::Nvtx); }
    profile_step_ended();
    { PhaseTimer t(Phase::Nvtx); }  // between steps: not a step's
  }
  const nlohmann::json after = self_profile_json();
  CHECK(after["steps"].get<uint64_t>() == before["steps"].get<uint64_t>() + 3);
  CHECK(step_calls(after) == step_calls(before) + 3);
  CHECK(total_calls(after, "nvtx") == total_calls(before, "nvtx") + 2 * (kProfileWarmupSteps + 3));
}
