// The over-synchronisation pass on several threads: its independent pieces of work
// (for_each_index) and what its checks' callbacks collect by rank (ByRank).
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sync/by_rank.h"
#include "sync/in_parallel.h"

using streamhaz::analysis::ByRank;
using streamhaz::analysis::RankRecords;
using streamhaz::analysis::for_each_index;

TEST_CASE("for_each_index: every index once, on as many threads as asked", "[in_parallel]") {
  for (unsigned jobs : {1u, 2u, 4u, 0u}) {
    CAPTURE(jobs);
    std::vector<std::atomic<int>> seen(1000);
    std::mutex m;
    std::set<std::thread::id> threads;
    for_each_index(seen.size(), jobs, [&](size_t i) {
      seen[i].fetch_add(1);
      std::lock_guard lock(m);
      threads.insert(std::this_thread::get_id());
    });
    for (const auto& s : seen) CHECK(s.load() == 1);
    if (jobs == 1) CHECK(threads.size() == 1);
    CHECK(threads.size() <= (jobs ? jobs : std::max(1u, std::thread::hardware_concurrency())));
  }
  int calls = 0;
  for_each_index(0, 4, [&](size_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("for_each_index: the error of the lowest index that failed, after every index ran", "[in_parallel]") {
  for (unsigned jobs : {1u, 3u}) {
    CAPTURE(jobs);
    std::vector<std::atomic<int>> ran(64);
    std::string what;
    try {
      for_each_index(ran.size(), jobs, [&](size_t i) {
        ran[i] = 1;
        if (i == 17 || i == 40) throw std::runtime_error("index " + std::to_string(i));
      });
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    CHECK(what == "index 17");
    // One thread stops at the first error, as a loop would; threads finish what they took.
    if (jobs > 1)
      for (const auto& r : ran) CHECK(r.load() == 1);
  }
}

TEST_CASE("ByRank: each rank's part by its number, joined in the run's order", "[in_parallel]") {
  // Ranks as numbered in practice (0 to N-1, in any order), and numbers far apart or negative.
  for (const std::vector<int>& numbers : {std::vector<int>{2, 0, 1}, std::vector<int>{7, -3, 1000000, 5}}) {
    std::vector<RankRecords> run;
    for (int n : numbers) run.push_back(RankRecords{n});
    ByRank<int> parts(run);
    for (int n : numbers) {
      parts.of(n).push_back(n);
      parts.of(n).push_back(n + 1);
    }
    std::vector<int> want;
    for (int n : numbers) want.insert(want.end(), {n, n + 1});
    REQUIRE(parts.parts().size() == numbers.size());
    for (size_t i = 0; i < numbers.size(); ++i) CHECK(parts.parts()[i] == std::vector<int>{numbers[i], numbers[i] + 1});
    CHECK(parts.joined() == want);
  }
}
