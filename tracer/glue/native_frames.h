// The calling thread's native return addresses, and the loaded objects they lie in.
//
// Unwinding (libgcc's _Unwind_Backtrace, through .eh_frame) may take the dynamic loader's
// lock, so it runs before an entry point reaches the recorder, never under the recorder's
// lock. Frames of the tracer, CUPTI, the driver and the CUDA runtime are cut from the inner
// end: a stack starts at the program's own call. Symbols are looked up offline, at check time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "streamhaz/tracer/frame_size_table.h"
#include "streamhaz/tracer/stack_table.h"

namespace streamhaz::tracer::glue {

// The loaded objects, as an immutable snapshot read without locks (from the unwinder's
// callback and under the recorder's lock alike). Only refresh() walks the loader's list (and
// so takes its lock): it is called outside every lock of ours, never while unwinding.
class ModuleMap {
 public:
  // Rescans when objects were loaded or unloaded since the last scan; true when one was
  // unloaded since.
  bool refresh();
  std::optional<ModuleInfo> find(uint64_t pc) const;
  // Whether `pc` lies in the tracer, CUPTI, the driver or a shared CUDA runtime.
  bool is_cuda_plumbing(uint64_t pc) const;
  bool knows(uint64_t pc) const;
  // How many times the list was rescanned: what it says of an address holds while this stays.
  uint64_t scans() const { return scans_.load(std::memory_order_acquire); }

 private:
  struct Entry {
    ModuleInfo info;
    uint64_t lo = 0, hi = 0;  // mapped address range
    bool plumbing = false;
  };
  struct Snapshot {
    std::vector<Entry> entries;  // sorted by lo
    unsigned long long adds = 0, subs = 0;
  };
  const Entry* lookup(uint64_t pc) const;
  // Replaced snapshots are kept (a reader may still hold one): one per load/unload seen.
  std::atomic<const Snapshot*> current_{nullptr};
  std::atomic<uint64_t> scans_{0};
  std::mutex refresh_mu_;
};

// Up to `max` (at most kMaxUnwound) return addresses of the calling thread, innermost first,
// CUDA plumbing cut (refreshing `modules` first where an address lay outside every known
// object). Walks learned frame sizes where it can (frame_size_table.h), else libgcc's unwinder,
// which teaches them; one call in `set_unwind_check_period` (default 256, 0: never) walks both
// and compares.
inline constexpr size_t kMaxUnwound = 64;
size_t unwind_program_frames(ModuleMap& modules, RawFrame* out, size_t max);

void set_unwind_check_period(uint32_t every);
// Whether learned walks recall what their thread's recent walks read (recent_walks.h; on by
// default): off only to measure what recalling saves (bench/tracer_unwind_bench.cpp).
void set_recent_walks(bool on);
struct UnwindCounts {
  uint64_t fast = 0, slow = 0;     // walks by learned sizes, by libgcc
  uint64_t checked = 0, differed = 0;  // slow walks compared with a fast one, and found different
  size_t sizes_learned = 0;
  uint64_t truncated = 0;  // fast walks that ended early at a frame of no usable size
  // Learned walks that failed (each then walked by libgcc), by cause: an address of no known
  // size or of varying size, in the CUDA plumbing (before the program's first frame) or after;
  // a frame off the thread's stack.
  uint64_t failed_plumbing_unknown = 0, failed_plumbing_varies = 0, failed_unknown = 0, failed_varies = 0,
           failed_off_stack = 0;
  // Learned walks that stepped over a frame of varying size where their thread saw it before.
  uint64_t through_varying = 0;
  // Frames learned walks read, answered from their thread's recent walks or asked of the table.
  uint64_t frames_recalled = 0, frames_asked = 0;
};
UnwindCounts unwind_counts();

}  // namespace streamhaz::tracer::glue
