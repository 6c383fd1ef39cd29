// The exact tier's launch memo: when an identical launch may reuse a footprint.
#include <catch2/catch.hpp>

#include "streamhaz/tracer/launch_memo.h"

using namespace streamhaz::tracer;
using streamhaz::trace::AccessMode;

namespace {
LaunchKey key(uint64_t function, std::string params, uint32_t grid = 4) {
  LaunchKey k;
  k.function = function;
  k.grid[0] = grid;
  k.block[0] = 256;
  k.params = std::move(params);
  return k;
}
const std::vector<KernelRange> kBuffer = {{0x1000, 0x2000, AccessMode::Read}, {0x8000, 0x9000, AccessMode::Write}};
}  // namespace

TEST_CASE("launch memo: a key is reused only after two instrumented launches agreed") {
  LaunchMemo memo;
  std::vector<KernelRange> out;
  const LaunchKey k = key(1, "args-a");
  CHECK_FALSE(memo.reuse(k, out));
  memo.observe(k, kBuffer);
  CHECK_FALSE(memo.reuse(k, out));  // one observation proves nothing about the next launch
  memo.observe(k, kBuffer);
  REQUIRE(memo.reuse(k, out));
  REQUIRE(out.size() == 2);
  CHECK(out[1].lo == 0x8000);
  CHECK(out[1].mode == AccessMode::Write);
  CHECK(memo.counts().reused == 1);
  CHECK(memo.counts().observed == 2);
}

TEST_CASE("launch memo: any difference in the launch is another key") {
  LaunchMemo memo;
  std::vector<KernelRange> out;
  for (int i = 0; i < 2; ++i) memo.observe(key(1, "args-a"), kBuffer);
  CHECK(memo.reuse(key(1, "args-a"), out));
  CHECK_FALSE(memo.reuse(key(1, "args-b"), out));     // other argument bytes (another tensor)
  CHECK_FALSE(memo.reuse(key(1, "args-a", 8), out));  // other grid
  CHECK_FALSE(memo.reuse(key(2, "args-a"), out));     // other function
  LaunchKey smem = key(1, "args-a");
  smem.shared_mem = 1024;
  CHECK_FALSE(memo.reuse(smem, out));
}

TEST_CASE("launch memo: identical launches that touched other bytes make the function data-dependent") {
  LaunchMemo memo;
  std::vector<KernelRange> out;
  const LaunchKey gather = key(7, "same-args");
  memo.observe(gather, kBuffer);
  memo.observe(gather, {{0x1000, 0x1080, AccessMode::Read}});  // an index picked other rows
  memo.observe(gather, kBuffer);
  CHECK_FALSE(memo.reuse(gather, out));
  // Every key of that function is instrumented from now on, even one whose launches agreed.
  const LaunchKey other = key(7, "other-args");
  for (int i = 0; i < 3; ++i) memo.observe(other, kBuffer);
  CHECK_FALSE(memo.reuse(other, out));
  CHECK(memo.counts().varying_functions == 1);
}

TEST_CASE("launch memo: launches whose argument bytes are unknown are never memoised") {
  LaunchMemo memo;
  std::vector<KernelRange> out;
  const LaunchKey unknown = key(3, "");
  for (int i = 0; i < 3; ++i) memo.observe(unknown, kBuffer);
  CHECK_FALSE(memo.reuse(unknown, out));
  CHECK(memo.counts().observed == 0);
}

TEST_CASE("launch memo: an empty footprint is never memoised (a failed launch reads back empty)") {
  LaunchMemo memo;
  std::vector<KernelRange> out;
  const LaunchKey k = key(4, "args");
  for (int i = 0; i < 3; ++i) memo.observe(k, {});
  CHECK_FALSE(memo.reuse(k, out));
}

TEST_CASE("launch memo: the context is part of the key, and a context's keys can be forgotten") {
  LaunchMemo memo;
  std::vector<KernelRange> out;
  LaunchKey gpu0 = key(5, "args"), gpu1 = key(5, "args");
  gpu0.context = 0x100;
  gpu1.context = 0x200;
  for (int i = 0; i < 2; ++i) memo.observe(gpu0, kBuffer);
  CHECK(memo.reuse(gpu0, out));
  CHECK_FALSE(memo.reuse(gpu1, out));  // one CUkernel handle, another GPU: its own bytes
  for (int i = 0; i < 2; ++i) memo.observe(gpu1, kBuffer);
  memo.forget(0x100);
  CHECK_FALSE(memo.reuse(gpu0, out));
  CHECK(memo.reuse(gpu1, out));
}
