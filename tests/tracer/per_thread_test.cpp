#include "streamhaz/tracer/per_thread.h"

#include <catch2/catch.hpp>
#include <atomic>
#include <thread>

using namespace streamhaz::tracer;

namespace {

std::atomic<int> made{0}, freed{0};

struct Counted {
  Counted() { made.fetch_add(1); }
  ~Counted() { freed.fetch_add(1); }
  int value = 0;
};

}  // namespace

TEST_CASE("PerThread: one T per thread, kept across calls, freed when the thread exits") {
  made = 0;
  freed = 0;
  Counted& mine = PerThread<Counted>::get();
  mine.value = 7;
  CHECK(&PerThread<Counted>::get() == &mine);
  CHECK(PerThread<Counted>::get().value == 7);

  const Counted* theirs = nullptr;
  int their_value = -1;
  std::thread other([&] {
    theirs = &PerThread<Counted>::get();
    their_value = PerThread<Counted>::get().value;  // a fresh T, not this thread's
    PerThread<Counted>::get().value = 9;
  });
  other.join();
  CHECK(theirs != &mine);
  CHECK(their_value == 0);
  CHECK(made == 2);
  CHECK(freed == 1);  // the other thread's, at its exit
  CHECK(mine.value == 7);

  std::thread idle([] {});  // a thread that never asked makes none
  idle.join();
  CHECK(made == 2);
  CHECK(freed == 1);
}
