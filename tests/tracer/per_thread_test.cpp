#include "streamhaz/tracer/per_thread.h"

#include <pthread.h>

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
struct OtherUser;  // a second PerThread of the same type

// A program's thread_local whose destructor reaches the tracer (as a CUDA call made from a
// thread_local's destructor does), after the thread's table was first made.
struct CallsAtExit {
  ~CallsAtExit() { PerThread<Counted>::get().value = 1; }
};

// A pthread key whose destructor reaches the tracer, as another library's per-thread cleanup may.
pthread_key_t late_key;
void late_call(void*) { PerThread<Counted>::get().value = 2; }

}  // namespace

TEST_CASE("PerThread: one T per thread, kept across calls, freed when the thread exits") {
  made = 0;
  freed = 0;
  Counted& mine = PerThread<Counted>::get();
  mine.value = 7;
  CHECK(&PerThread<Counted>::get() == &mine);
  CHECK(PerThread<Counted>::find() == &mine);
  CHECK(PerThread<Counted, OtherUser>::find() == nullptr);  // another tag: another object
  CHECK(&PerThread<Counted, OtherUser>::get() != &mine);

  const Counted* theirs = nullptr;
  const Counted* found_first = &mine;
  int their_value = -1;
  std::thread other([&] {
    found_first = PerThread<Counted>::find();  // find() makes none
    theirs = &PerThread<Counted>::get();
    their_value = PerThread<Counted>::get().value;  // a fresh T, not this thread's
  });
  other.join();
  CHECK(found_first == nullptr);
  CHECK(theirs != &mine);
  CHECK(their_value == 0);
  CHECK(made == 3);
  CHECK(freed == 1);  // the other thread's, at its exit
  CHECK(mine.value == 7);

  std::thread idle([] {});  // a thread that never asked makes none
  idle.join();
  CHECK(made == 3);
  CHECK(freed == 1);
}

TEST_CASE("PerThread: a call from a thread's exit (thread_local or key destructors) is served and freed") {
  made = 0;
  freed = 0;
  REQUIRE(pthread_key_create(&late_key, &late_call) == 0);
  for (int round = 0; round < 20; ++round) {
    std::thread t([] {
      PerThread<Counted>::get();
      thread_local CallsAtExit calls_at_exit;
      (void)calls_at_exit;
      pthread_setspecific(late_key, &late_key);
    });
    t.join();
  }
  pthread_key_delete(late_key);
  CHECK(made >= 20);
  CHECK(freed == made);  // none left behind, whatever order the key destructors ran in
}
