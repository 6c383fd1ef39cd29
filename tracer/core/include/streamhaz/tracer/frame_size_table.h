#pragma once
// Stack frame sizes learned from the slow unwinder, for a fast one.
//
// libgcc's _Unwind_Backtrace interprets each frame's DWARF call-frame program: about 0.4 us a
// frame, 13 us for a stack on PyTorch's autograd thread, paid on every CUDA call that thread
// makes. But at a given return address a frame almost always has one size (the distance from
// its callee's CFA to its own), so after one slow walk the next ones are table lookups: the
// return address of the frame above `cfa` is the word at cfa - 8 (x86-64), and that frame's
// CFA is cfa + size. A size seen to differ (alloca, stack realignment) is marked and never
// used again; the unwinder re-checks fast walks against slow ones now and then
// (native_frames.cpp). The table is read without locks from every thread.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "streamhaz/tracer/recent_walks.h"
#include "streamhaz/tracer/varying_frame_sizes.h"

namespace streamhaz::tracer {

class FrameSizeTable {
 public:
  // What find() says besides a size.
  static constexpr uint32_t kUnknown = 0;
  static constexpr uint32_t kVaries = 0xFFFFFFFE;    // seen with two sizes: slow walks only
  static constexpr uint32_t kOutermost = 0xFFFFFFFF;  // the slow unwinder's last frame
  static constexpr uint32_t kMaxSize = 1u << 24;      // larger is not a frame we trust

  explicit FrameSizeTable(size_t slots_log2 = 16);

  // Records that the frame returning to `ip` had `size` bytes; returns false where it had
  // another size before (the address is then marked kVaries).
  bool learn(uint64_t ip, uint32_t size);
  void learn_outermost(uint64_t ip);
  // The size learned for `ip`, or kUnknown / kVaries / kOutermost.
  uint32_t find(uint64_t ip) const;
  // Forgets every size (objects were unloaded: an address may now hold other code).
  void forget_all() {
    generation_.fetch_add(1, std::memory_order_acq_rel);
    changes_.fetch_add(1, std::memory_order_acq_rel);  // after, as in store()
  }
  size_t learned() const { return learned_.load(std::memory_order_relaxed); }
  // How many times an answer of find() changed (an address learned, a size marked as varying,
  // every size forgotten): what a thread remembers of earlier answers holds while it stays.
  uint64_t changes() const { return changes_.load(std::memory_order_acquire); }

 private:
  struct Slot {
    std::atomic<uint64_t> ip{0};
    std::atomic<uint64_t> value{0};  // generation << 32 | size; 0: not written yet
  };
  void store(uint64_t ip, uint32_t size, bool only_if_new, bool& conflict);
  std::unique_ptr<Slot[]> slots_;
  size_t mask_;
  std::atomic<uint32_t> generation_{1};
  std::atomic<size_t> learned_{0};
  std::atomic<uint64_t> changes_{0};
};

// A fast walk's result: `n` return addresses in `ips`, innermost first.
struct LearnedWalk {
  size_t n = 0;
  bool ok = false;  // false: an address with no usable size, or a CFA out of [lo, hi)
  bool truncated = false;  // ok, but ended at an address with no usable size (see below)
  // Where a walk failed, for the self-profile: what the table said (kUnknown or kVaries;
  // kMaxSize + 1 for a CFA off the stack) and how many kept addresses it held then.
  uint32_t failed_on = 0;
  size_t kept = 0;
  size_t first_kept = 0;  // the index of the first address keep() took (n: none)
  size_t varying = 0;  // frames of varying size stepped over by what this thread saw before
  size_t recalled = 0, asked = 0;  // frames whose answers came from `recent`, and the others
};

// Walks outward from `cfa` (a CFA on the calling thread's stack), reading words only inside
// [lo, hi) (the live part of that stack), until `max` kept addresses, `capacity` addresses or
// the outermost frame. `keep(ip, kept_so_far)` says whether an address counts toward `max`
// (the CUDA plumbing at the inner end does not). An address with no usable size fails the
// walk, unless it is at least the `truncate_at`-th kept one: the walk then ends with it
// (`truncated`). A frame whose size varies (alloca, stack realignment) deep in a thread's
// stack would otherwise send every walk through it to the slow unwinder. A frame of varying
// size is stepped over where `varying` (this thread's) saw it at this very place, its caller's
// return address still above it (varying_frame_sizes.h). With `recent` (this thread's), the
// answers of the table and of keep() for the frames an earlier walk from this depth also read
// come from there, and this walk's answers are left there (recent_walks.h); `keep_version`
// changes whenever keep() may answer otherwise for an address.
template <class Keep>
LearnedWalk walk_learned_frames(const FrameSizeTable& table, uint64_t cfa, uint64_t lo, uint64_t hi, uint64_t* ips,
                                size_t capacity, size_t max, Keep&& keep, size_t truncate_at = SIZE_MAX,
                                const VaryingFrameSizes* varying = nullptr, RecentWalks* recent = nullptr,
                                uint64_t keep_version = 0) {
  LearnedWalk w;
  size_t kept = 0;
  uint64_t expected_ip = 0;  // after a frame of varying size: its caller's return address as seen
  // The slot of this walk's depth: recalled from while it holds this walk's addresses, and
  // refilled from the first frame that differs.
  RecentWalks::Walk* slot = nullptr;
  bool recalling = false;
  const uint64_t changes = table.changes();
  if (recent && cfa <= hi) {
    slot = &recent->slot(hi - cfa);
    recalling = slot->depth == hi - cfa && slot->changes == changes && slot->keep_version == keep_version;
    if (!recalling) {
      slot->depth = hi - cfa;
      slot->changes = changes;
      slot->keep_version = keep_version;
      slot->n = 0;
    }
  }
  // Asks the table and keep() about the frame at index w.n, or recalls what they said.
  auto ask = [&](uint64_t ip, uint32_t& size, bool& keeps) {
    const size_t i = w.n;
    if (recalling && i < slot->n && slot->ips[i] == ip) {
      size = slot->sizes[i];
      keeps = slot->kept[i];
      ++w.recalled;
      return;
    }
    size = table.find(ip);
    keeps = keep(ip, kept);
    ++w.asked;
    if (!slot || i >= RecentWalks::kFrames) return;
    recalling = false;
    slot->ips[i] = ip;
    slot->sizes[i] = size;
    slot->kept[i] = keeps;
    slot->n = uint32_t(i + 1);
  };
  w.first_kept = SIZE_MAX;
  auto take = [&](uint64_t ip, bool keeps) {
    if (keeps && w.first_kept == SIZE_MAX) w.first_kept = w.n;
    ips[w.n++] = ip;
    if (keeps) ++kept;
  };
  auto finish = [&](bool ok) {
    w.ok = ok;
    if (w.first_kept == SIZE_MAX) w.first_kept = w.n;
    return w;
  };
  while (w.n < capacity && kept < max) {
    if (cfa < lo + 8 || cfa > hi) {
      w.failed_on = FrameSizeTable::kMaxSize + 1;
      return finish(false);
    }
    uint64_t ip;
    __builtin_memcpy(&ip, reinterpret_cast<const void*>(cfa - 8), sizeof ip);
    if (expected_ip && ip != expected_ip) {  // not the place it was seen at: as a frame of no size
      if (kept < truncate_at) {
        w.failed_on = FrameSizeTable::kVaries;
        w.kept = kept;
        return finish(false);
      }
      w.truncated = true;
      break;
    }
    expected_ip = 0;
    if (ip == 0) break;
    uint32_t size;
    bool keeps;
    ask(ip, size, keeps);
    if (size == FrameSizeTable::kVaries && varying) {
      if (const VaryingFrameSizes::Seen seen = varying->find(ip, cfa); seen.size) {
        size = seen.size;
        expected_ip = seen.caller_ip;
        ++w.varying;
      }
    }
    if (size == FrameSizeTable::kUnknown || size == FrameSizeTable::kVaries) {
      if (kept + 1 < truncate_at || !keeps) {
        w.failed_on = size;
        w.kept = kept;
        return finish(false);
      }
      take(ip, keeps);
      w.truncated = true;
      break;
    }
    take(ip, keeps);
    if (size == FrameSizeTable::kOutermost) break;
    cfa += size;
  }
  return finish(true);
}

}  // namespace streamhaz::tracer
