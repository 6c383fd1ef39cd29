// The pointer footprint tier in the recorder: launch-argument words that point into traced
// allocations become Access records of tier pointer; the raw bytes are kept only when the
// static/exact tiers need them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "record_log.h"
#include "streamhaz/tracer/allocation_index.h"
#include "streamhaz/tracer/launch_memo.h"
#include "streamhaz/tracer/operand_roles.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

namespace {

std::string words(std::initializer_list<uint64_t> values) {
  std::string bytes(values.size() * 8, '\0');
  size_t off = 0;
  for (uint64_t v : values) {
    std::memcpy(bytes.data() + off, &v, 8);
    off += 8;
  }
  return bytes;
}

constexpr uint64_t kSegment = 0x7f0000000000;

std::vector<uint64_t> pointers_in(const AllocationIndex& index, std::string_view bytes) {
  std::vector<uint64_t> room(bytes.size() / 8);
  room.resize(index.pointers_in(bytes, room.data()));
  return room;
}

}  // namespace

TEST_CASE("AllocationIndex finds values inside live allocations only") {
  AllocationIndex index;
  index.add(kSegment, 4096);
  index.add(kSegment + 8192, 4096);
  CHECK(index.contains(kSegment));
  CHECK(index.contains(kSegment + 4095));
  CHECK_FALSE(index.contains(kSegment + 4096));  // the gap between the two
  CHECK(index.contains(kSegment + 8192 + 100));
  CHECK_FALSE(index.contains(kSegment + 8192 + 4096));
  CHECK_FALSE(index.contains(42));
  index.remove(kSegment);
  CHECK_FALSE(index.contains(kSegment + 10));
  CHECK(index.contains(kSegment + 8192));
  index.remove(kSegment + 8192);
  CHECK_FALSE(index.contains(kSegment + 8192));
  CHECK(index.size() == 0);
}

TEST_CASE("AllocationIndex agrees with a plain list of ranges through random adds and removes") {
  AllocationIndex index;
  std::map<uint64_t, uint64_t> live;  // base -> end
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  for (int step = 0; step < 3000; ++step) {
    const uint64_t base = kSegment + (next() >> 44) * 4096, bytes = 1 + (next() >> 50);
    if (next() % 3 == 0 && !live.empty()) {
      auto it = live.lower_bound(base);
      if (it == live.end()) it = live.begin();
      index.remove(it->first);
      live.erase(it);
    } else if (live.lower_bound(base) == live.upper_bound(base + bytes - 1) &&
               (live.lower_bound(base) == live.begin() || std::prev(live.lower_bound(base))->second <= base)) {
      index.add(base, bytes);  // allocations never overlap
      live[base] = base + bytes;
    }
    for (int probe = 0; probe < 8; ++probe) {
      const uint64_t v = kSegment + (next() >> 43) * 2048 + (next() >> 60);
      auto it = live.upper_bound(v);
      const bool expected = it != live.begin() && v < std::prev(it)->second;
      REQUIRE(index.contains(v) == expected);
      const std::vector<uint64_t> found = pointers_in(index, words({v}));
      REQUIRE(found.size() == (expected ? 1u : 0u));
    }
  }
  CHECK(index.size() == live.size());
}

TEST_CASE("AllocationIndex scan agrees with asking about each word, on random argument blocks") {
  AllocationIndex index;
  uint64_t state = 777;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  // Segments of 2 MiB with gaps, some adjacent, over 1 GiB.
  for (uint64_t i = 0; i < 512; ++i)
    if (next() % 3 != 0) index.add(kSegment + i * (2 << 20), (next() % 4 == 0 ? 1 : 2) << 20);
  for (int block = 0; block < 500; ++block) {
    std::string bytes(8 * (1 + next() % 400) + next() % 8, '\0');
    for (size_t off = 0; off + 8 <= bytes.size(); off += 8) {
      const uint64_t kind = next() % 4;
      uint64_t w = kind == 0 ? next() % 4096                                 // a count
                   : kind == 1 ? next()                                      // anything
                   : kSegment + (next() % (uint64_t{1} << 30)) - (kind == 2 ? 0 : 4096);  // near or in
      if (off >= 16 && next() % 8 == 0) std::memcpy(&w, bytes.data() + off - 16, 8);  // aliasing
      std::memcpy(bytes.data() + off, &w, 8);
    }
    std::vector<uint64_t> expected;
    for (size_t off = 0; off + 8 <= bytes.size(); off += 8) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + off, 8);
      if (index.contains(w)) expected.push_back(w);
    }
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    REQUIRE(pointers_in(index, bytes) == expected);
  }
}

TEST_CASE("AllocationIndex forgets the ranges recent lookups remembered once allocations change") {
  AllocationIndex index;
  index.add(kSegment, 1 << 20);
  // Allocations on both sides keep the bounding range wide after the removal.
  index.add(kSegment - (4 << 20), 4096);
  index.add(kSegment + (4 << 20), 4096);
  REQUIRE(pointers_in(index, words({kSegment + 64})).size() == 1);  // remembered by its 2 MiB page
  index.remove(kSegment);
  CHECK_FALSE(index.contains(kSegment + 64));
  CHECK(pointers_in(index, words({kSegment + 64})).empty());
  // A base used again with a smaller size: the old end is gone.
  index.add(kSegment, 1 << 20);
  CHECK(index.contains(kSegment + 8192));
  index.add(kSegment, 4096);
  CHECK_FALSE(index.contains(kSegment + 8192));
}

TEST_CASE("AllocationIndex scans aligned words, each pointer once") {
  AllocationIndex index;
  index.add(kSegment, 1 << 20);
  // A count, a pointer, a float pair, the same pointer again (aliasing), a second pointer.
  CHECK(pointers_in(index, words({1024, kSegment + 256, 0x3f8000003f800000, kSegment + 256, kSegment + 4096})) ==
        std::vector<uint64_t>{kSegment + 256, kSegment + 4096});
  // A trailing partial word is not read.
  CHECK(pointers_in(index, words({kSegment}).substr(0, 7)).empty());
}

TEST_CASE("AllocationIndex scan: a pointer is judged by its own range, not the last one found") {
  AllocationIndex index;
  index.add(kSegment, 4096);
  index.add(kSegment + 8192, 4096);
  // Alternating ranges, then the gap between them, one past the end and one before the first,
  // each right after a pointer that was found.
  const std::vector<uint64_t> found =
      pointers_in(index, words({kSegment + 8, kSegment + 8192 + 8, kSegment + 16, kSegment + 4096, kSegment + 8200,
                                kSegment + 8192 + 4096, kSegment + 8, kSegment - 8}));
  CHECK(found == std::vector<uint64_t>{kSegment + 8, kSegment + 16, kSegment + 8192 + 8});
}

TEST_CASE("pointer tier: launch arguments into allocations become pointer Access records") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::Pointers);
  rec.allocated(AllocKind::Device, kSegment, 1 << 20, 0);
  const std::string args = words({kSegment + 512, 77, 0x1234});
  KernelLaunch k = testing::launch(1, "k");
  k.params = args;
  rec.kernel_launched(StreamRef{0x7000, 0}, 1, k);
  const auto kernels = log.all<Kernel>();
  const auto accesses = log.all<Access>();
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].params.empty());  // pointer tier keeps no raw bytes
  REQUIRE(accesses.size() == 1);
  CHECK(accesses[0].op_seq == kernels[0].op.seq);
  CHECK(accesses[0].ptr == kSegment + 512);
  CHECK(accesses[0].bytes == 0);
  CHECK(accesses[0].tier == FootprintTier::Pointer);
  CHECK(std::holds_alternative<Access>(log.records.back()));  // right after its kernel
}

TEST_CASE("pointer tier: TensorIterator kernels give their output as written, their inputs as read") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::Pointers);
  rec.allocated(AllocKind::Device, kSegment, 1 << 20, 0);
  const uint64_t out = kSegment, in = kSegment + 4096, captured = kSegment + 8192;
  // (int N, functor holding a pointer, std::array<char*, 2>{out, in})
  const std::string args = words({64, captured, out, in});
  const std::vector<std::pair<size_t, size_t>> layout{{0, 4}, {8, 8}, {16, 16}};
  KernelLaunch k = testing::launch(7, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_"
                                      "internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_");
  k.params = args;
  k.layout = &layout;
  rec.kernel_launched(StreamRef{0x7000, 0}, 1, k);
  std::map<uint64_t, AccessMode> role;
  for (const Access& a : log.all<Access>()) role[a.ptr] = a.mode;
  CHECK(role.at(out) == AccessMode::Write);
  CHECK(role.at(in) == AccessMode::Read);
  CHECK(role.at(captured) == AccessMode::ReadWrite);  // outside the operand array: unknown

  // In place (out == in): written. Without a layout, or another family: unknown.
  log.records.clear();
  const std::string in_place = words({64, 0, out, out});
  k.params = in_place;
  rec.kernel_launched(StreamRef{0x7000, 0}, 2, k);
  REQUIRE(log.all<Access>().size() == 1);
  CHECK(log.all<Access>()[0].mode == AccessMode::Write);
  log.records.clear();
  k.layout = nullptr;
  rec.kernel_launched(StreamRef{0x7000, 0}, 3, k);
  CHECK(log.all<Access>()[0].mode == AccessMode::ReadWrite);
  log.records.clear();
  KernelLaunch other = testing::launch(8, "_ZN2at6native13reduce_kernelILi128ELi4E");
  other.params = args;
  other.layout = &layout;
  rec.kernel_launched(StreamRef{0x7000, 0}, 4, other);
  for (const Access& a : log.all<Access>()) CHECK(a.mode == AccessMode::ReadWrite);
}

TEST_CASE("pointer tier: a cat launch's input slots past its grid rows are not its operands") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::Pointers);
  rec.allocated(AllocKind::Device, kSegment, 1 << 20, 0);
  rec.allocated(AllocKind::Device, kSegment + (4 << 20), 1 << 20, 0);  // another tensor's buffer
  const uint64_t out = kSegment, in0 = kSegment + 4096, in1 = kSegment + 8192, stale = kSegment + (4 << 20) + 768;
  // (char* output, CatArrInputTensorMetadata{input[4], ...}, ...): two inputs filled, slot 2
  // empty, slot 3 a stale pointer the host stack left, then the slots' sizes.
  const std::string args = words({out, in0, in1, 0, stale, 0x0000004000000000, 0x40, 7});
  const std::vector<std::pair<size_t, size_t>> layout{{0, 8}, {8, 48}, {56, 8}};
  KernelLaunch cat = testing::launch(
      9, "_ZN2at6native40_GLOBAL__N__0f1a8107_8_Shape_cu_49f7391c30CatArrayBatchedCopy_vectorizedINS1_10OpaqueTypeILj2EEEjLi3ELi128ELi1ELi16ELi8EEEvPcNS1_25CatArrInputTensorMetadataIT_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_");
  cat.params = args;
  cat.layout = &layout;
  cat.grid[0] = 3072;
  uint64_t correlation = 0;
  // The pointers a launch of `k` with `rows` grid rows gives as accesses.
  auto pointers_of = [&](KernelLaunch k, uint32_t rows, bool with_layout) {
    log.records.clear();
    k.grid[1] = rows;
    if (!with_layout) k.layout = nullptr;
    rec.kernel_launched(StreamRef{0x7000, 0}, ++correlation, k);
    std::set<uint64_t> seen;
    for (const Access& a : log.all<Access>()) seen.insert(a.ptr);
    return seen;
  };
  CHECK(pointers_of(cat, 2, true) == std::set<uint64_t>{out, in0, in1});
  // Four rows: slot 3 is the launch's own. Without the layout, or another kernel, every word
  // is scanned.
  CHECK(pointers_of(cat, 4, true).count(stale) == 1);
  CHECK(pointers_of(cat, 2, false).count(stale) == 1);
  KernelLaunch other = testing::launch(10, "_ZN2at6native13reduce_kernelILi128ELi4E");
  other.params = args;
  other.layout = &layout;
  CHECK(pointers_of(other, 2, true).count(stale) == 1);
}

TEST_CASE("operand roles agree with asking, for each pointer, where each word holding it sits") {
  uint64_t state = 4242;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  for (int block = 0; block < 2000; ++block) {
    // Up to 80 distinct pointers (more than the pass keeps on its stack), some words elsewhere.
    std::vector<uint64_t> pointers;
    const size_t count = 1 + next() % (block % 10 == 0 ? 80 : 6);
    for (size_t i = 0; i < count; ++i) pointers.push_back(kSegment + (next() % 4096) * 64);
    std::sort(pointers.begin(), pointers.end());
    pointers.erase(std::unique(pointers.begin(), pointers.end()), pointers.end());
    std::string params(8 * (4 + next() % 40), '\0');
    for (size_t off = 0; off < params.size(); off += 8) {
      const uint64_t w = next() % 3 == 0 ? next() % 100 : pointers[next() % pointers.size()];
      std::memcpy(params.data() + off, &w, 8);
    }
    const size_t slots = params.size() / 8, first = next() % slots, n = 1 + next() % std::min<size_t>(16, slots - first);
    const std::vector<std::pair<size_t, size_t>> layout{{0, 8}, {8 * first, 8 * n}};
    std::vector<AccessMode> roles;
    operand_roles(params, &layout, 1, pointers, roles);
    REQUIRE(roles.size() == pointers.size());
    for (size_t i = 0; i < pointers.size(); ++i) {
      bool output = false, input = false, elsewhere = false;
      for (size_t slot = 0; slot < slots; ++slot) {
        uint64_t w;
        std::memcpy(&w, params.data() + 8 * slot, 8);
        if (w != pointers[i]) continue;
        if (slot < first || slot >= first + n) elsewhere = true;
        else if (slot == first) output = true;
        else input = true;
      }
      const AccessMode expected = output ? AccessMode::Write : input && !elsewhere ? AccessMode::Read : AccessMode::ReadWrite;
      REQUIRE(roles[i] == expected);
    }
  }
}

TEST_CASE("pointer tier: freed memory is no longer a pointer target") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::Pointers);
  rec.allocated(AllocKind::Device, kSegment, 4096, 0);
  rec.freed(AllocKind::Device, kSegment);
  const std::string args = words({kSegment});
  KernelLaunch k = testing::launch(1, "k");
  k.params = args;
  rec.kernel_launched(StreamRef{0x7000, 0}, 1, k);
  CHECK(log.count<Access>() == 0);
}

TEST_CASE("static/exact tiers keep the raw bytes as well; api keeps neither") {
  const std::string args = words({kSegment + 8, 3});
  for (KernelArguments mode : {KernelArguments::PointersAndBytes, KernelArguments::Drop}) {
    RecordLog log;
    Recorder rec(log);
    rec.set_kernel_arguments(mode);
    rec.allocated(AllocKind::Device, kSegment, 4096, 0);
    KernelLaunch k = testing::launch(1, "k");
    k.params = args;
    rec.kernel_launched(StreamRef{0x7000, 0}, 1, k);
    const bool keep = mode == KernelArguments::PointersAndBytes;
    CHECK(log.all<Kernel>()[0].params == (keep ? args : std::string()));
    CHECK(log.count<Access>() == (keep ? 1u : 0u));
  }
}

TEST_CASE("exact tier: a held launch leaves with the ranges its instrumentation reported") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::PointersAndBytes);
  rec.set_hold_kernels(true);
  rec.allocated(AllocKind::Device, kSegment, 1 << 20, 0);
  const std::string args = words({kSegment, 64});
  KernelLaunch k = testing::launch(1, "copy");
  k.params = args;
  rec.kernel_launched(StreamRef{0x7000, 0}, 1, k);
  CHECK(log.count<Kernel>() == 0);  // waits for its footprint
  CHECK(rec.holds_kernel());
  const std::vector<KernelRange> touched{{kSegment, kSegment + 256, AccessMode::Read},
                                         {kSegment + 4096, kSegment + 4352, AccessMode::Write}};
  rec.release_kernel(&touched);
  CHECK_FALSE(rec.holds_kernel());
  const auto kernels = log.all<Kernel>();
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].params == args);
  std::vector<Access> exact;
  for (const Access& a : log.all<Access>())
    if (a.tier == FootprintTier::Exact) exact.push_back(a);
  REQUIRE(exact.size() == 2);
  CHECK(exact[0].op_seq == kernels[0].op.seq);
  CHECK(exact[0].ptr == kSegment);
  CHECK(exact[0].bytes == 256);
  CHECK(exact[1].mode == AccessMode::Write);
  rec.release_kernel(nullptr);  // nothing held: nothing leaves
  CHECK(log.count<Kernel>() == 1);
}

TEST_CASE("AllocationIndex cuts a range at the allocations it overlaps, keeps one that overlaps none") {
  AllocationIndex index;
  index.add(0x10000, 0x1000);
  index.add(0x12000, 0x1000);
  std::vector<std::pair<uint64_t, uint64_t>> out;
  index.cut(0xf000, 0x12800, out);  // over the first, the gap, half the second
  REQUIRE(out.size() == 2);
  CHECK(out[0] == std::pair<uint64_t, uint64_t>{0x10000, 0x11000});
  CHECK(out[1] == std::pair<uint64_t, uint64_t>{0x12000, 0x12800});
  out.clear();
  index.cut(0x20000, 0x28000, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0] == std::pair<uint64_t, uint64_t>{0x20000, 0x28000});
}

TEST_CASE("exact tier: coarse ranges leave as tier coarse, cut at the allocations") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::PointersAndBytes);
  rec.set_hold_kernels(true);
  rec.allocated(AllocKind::Device, kSegment, 1 << 20, 0);
  rec.kernel_launched(StreamRef{0x7000, 0}, 1, testing::launch(1, "huge"));
  // A 32 KiB granule reaching 16 KiB past the allocation's end, and one fine range.
  const std::vector<KernelRange> touched{{kSegment, kSegment + 128, AccessMode::Read, false},
                                         {kSegment + (1 << 20) - 16384, kSegment + (1 << 20) + 16384, AccessMode::Write, true}};
  rec.release_kernel(&touched);
  std::vector<Access> exact, coarse;
  for (const Access& a : log.all<Access>()) {
    if (a.tier == FootprintTier::Exact) exact.push_back(a);
    if (a.tier == FootprintTier::Coarse) coarse.push_back(a);
  }
  REQUIRE(exact.size() == 1);
  REQUIRE(coarse.size() == 1);
  CHECK(coarse[0].ptr == kSegment + (1 << 20) - 16384);
  CHECK(coarse[0].bytes == 16384);
  CHECK(coarse[0].mode == AccessMode::Write);
}

TEST_CASE("exact tier: asking about a thread with nothing held writes nothing") {
  RecordLog log;
  Recorder rec(log);
  rec.set_hold_kernels(true);
  CHECK_FALSE(rec.holds_kernel());
  rec.release_kernel(nullptr);
  CHECK(log.records.empty());  // a process that launched nothing leaves no records
}

TEST_CASE("exact tier: a held launch gives its memo key, and may leave with memo-tier ranges") {
  RecordLog log;
  Recorder rec(log);
  rec.set_kernel_arguments(KernelArguments::PointersAndBytes);
  rec.set_hold_kernels(true);
  LaunchKey key;
  CHECK_FALSE(rec.held_launch_key(key));  // nothing held
  const std::string args = words({kSegment, 64});
  KernelLaunch k = testing::launch(7, "copy");
  k.grid[0] = 12;
  k.shared_mem = 512;
  k.params = args;
  rec.kernel_launched(StreamRef{0x7000, 0}, 1, k);
  REQUIRE(rec.held_launch_key(key));
  CHECK(key.function == 7);
  CHECK(key.grid[0] == 12);
  CHECK(key.shared_mem == 512);
  CHECK(key.params == args);
  CHECK(rec.holds_kernel());  // asking does not release it
  const std::vector<KernelRange> remembered{{kSegment, kSegment + 128, AccessMode::Write}};
  rec.release_kernel(&remembered, FootprintTier::Memo);
  std::vector<Access> memo;
  for (const Access& a : log.all<Access>())
    if (a.tier == FootprintTier::Memo) memo.push_back(a);
  REQUIRE(memo.size() == 1);
  CHECK(memo[0].bytes == 128);
  CHECK(memo[0].mode == AccessMode::Write);
}

TEST_CASE("exact tier: the recorder counts open stream captures (phases never switch inside one)") {
  RecordLog log;
  Recorder rec(log);
  CHECK(rec.open_captures() == 0);
  rec.capture_began(StreamRef{0x7000, 0});
  rec.capture_began(StreamRef{0x7100, 0});
  CHECK(rec.open_captures() == 2);
  rec.capture_ended(StreamRef{0x7000, 0}, 1);
  rec.capture_ended(StreamRef{0x7100, 0}, 2);
  CHECK(rec.open_captures() == 0);
  rec.capture_ended(StreamRef{0x7100, 0}, 3);  // an end without a begin does not go below zero
  CHECK(rec.open_captures() == 0);
}
