#pragma once
// Sizes of frames that vary (FrameSizeTable::kVaries), as one thread last saw them.
//
// A frame that realigns the stack or calls alloca has no one size at its return address, so the
// learned walk cannot step over it and the slow unwinder (libgcc, 30-40 us a walk on PyTorch's
// autograd thread) walks the whole stack instead: on a GPT FSDP2 step, 9 walks and 0.3 ms a
// step. But a thread that reaches such a frame again through the same callers finds it at the
// same place: the same callee CFA, the same size, the same return address above it. So each
// slow walk leaves, per thread, (return address, callee CFA) -> (size, the caller's return
// address); a learned walk may step over the frame with that size when the word where the
// caller's return address was is that address still, and fails as before otherwise.
#include <array>
#include <cstdint>

namespace streamhaz::tracer {

class VaryingFrameSizes {
 public:
  static constexpr size_t kEntries = 32;

  // A slow walk saw the frame returning to `ip`, whose callee's CFA was `callee_cfa`, `size`
  // bytes large, with `caller_ip` as its own return address.
  void remember(uint64_t ip, uint64_t callee_cfa, uint32_t size, uint64_t caller_ip) {
    for (Entry& e : entries_)
      if (e.ip == ip && e.callee_cfa == callee_cfa) {
        e = Entry{ip, callee_cfa, caller_ip, size};
        return;
      }
    entries_[next_] = Entry{ip, callee_cfa, caller_ip, size};
    next_ = (next_ + 1) % kEntries;
  }

  struct Seen {
    uint32_t size = 0;  // 0: never seen there
    uint64_t caller_ip = 0;
  };
  Seen find(uint64_t ip, uint64_t callee_cfa) const {
    for (const Entry& e : entries_)
      if (e.ip == ip && e.callee_cfa == callee_cfa) return {e.size, e.caller_ip};
    return {};
  }

 private:
  struct Entry {
    uint64_t ip = 0, callee_cfa = 0, caller_ip = 0;
    uint32_t size = 0;
  };
  std::array<Entry, kEntries> entries_{};
  size_t next_ = 0;
};

}  // namespace streamhaz::tracer
