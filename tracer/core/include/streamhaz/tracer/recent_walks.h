#pragma once
// A thread's recent learned walks, frame by frame: what the frame-size table and keep() said.
//
// A learned walk asks the frame-size table (1 MiB of scattered slots) once per frame, and the
// module map (a binary search) once per frame of the CUDA plumbing at its inner end; between two
// CUDA calls the program's own work evicts both, so on a real run each ask is a cache miss. A thread makes the same calls from the same places again and again, and
// such a call starts its walk at the same depth of the thread's stack and reads the same return
// addresses. So each walk leaves its answers here, in a slot chosen by its starting depth; a later
// walk from that depth takes the answers from the slot for as long as it reads the very return
// addresses the slot holds (a few adjacent lines), and asks again from the first one that differs.
// Exact: a slot is used only while the table has changed no answer since it was filled
// (FrameSizeTable::changes()) and keep()'s answers stand (the walker's `keep_version`: for the
// tracer's walks, the module map's scans, since a newly listed object may be CUDA plumbing).
#include <array>
#include <cstddef>
#include <cstdint>

namespace streamhaz::tracer {

class RecentWalks {
 public:
  static constexpr size_t kSlots = 16;
  static constexpr size_t kFrames = 32;  // a walk's first frames; the rest are asked for

  struct Walk {
    uint64_t depth = 0;    // the walk's start, as bytes below the top of the thread's stack
    uint64_t changes = 0;  // the table's change count when the answers were read
    uint64_t keep_version = 0;  // and keep()'s
    uint32_t n = 0;        // frames held
    std::array<uint64_t, kFrames> ips{};
    std::array<uint32_t, kFrames> sizes{};  // what FrameSizeTable::find said
    std::array<bool, kFrames> kept{};       // what keep() said
  };

  Walk& slot(uint64_t depth) { return walks_[size_t((depth >> 4) * 0x9E3779B97F4A7C15ull >> 60) % kSlots]; }

 private:
  std::array<Walk, kSlots> walks_{};
};

}  // namespace streamhaz::tracer
