// Node storage for one node-based container (a rank's shadow-memory map): nodes come from a
// few blocks owned by the pool, freed nodes are reused. A rank's nodes then lie together
// instead of among every other rank's allocations, so that a lookup that walks the tree
// touches a few pages (with a thousand ranks checked in turn, each rank's walk starts cold).
// Memory returns to the system when the pool goes, not when a node is freed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace streamhaz::analysis {

class NodePool {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  // Blocks of one slot size, the size of the first request (a map asks for one node size)
  // rounded up to whole cache lines: a tree walk reads a node's links and key, its first 40
  // bytes, which then always lie in one line (with 16-byte slots, half the nodes straddle two).
  void* allocate(size_t bytes) {
    if (slot_ == 0) slot_ = (bytes + kLine - 1) / kLine * kLine;
    if (bytes > slot_) return ::operator new(bytes);
    if (free_) {
      Free* f = free_;
      free_ = f->next;
      return f;
    }
    if (used_ == block_slots_) add_block();
    return reinterpret_cast<std::byte*>(blocks_.back().get()) + slot_ * used_++;
  }
  // Asks the CPU to bring every node block toward its caches (no effect on the contents).
  void prefetch() const {
    size_t slots = 8;
    for (size_t b = 0; b < blocks_.size(); ++b, slots = std::min<size_t>(slots * 2, 256)) {
      const size_t lines = slot_ / kLine * (b + 1 == blocks_.size() ? used_ : slots);
      for (size_t i = 0; i < lines; ++i) __builtin_prefetch(&blocks_[b][i], 0, 2);
    }
  }
  void deallocate(void* p, size_t bytes) noexcept {
    if (bytes > slot_) return ::operator delete(p);
    free_ = new (p) Free{free_};
  }

 private:
  static constexpr size_t kLine = 64;
  struct alignas(kLine) Line {
    std::byte bytes[kLine];
  };
  struct Free {
    Free* next;
  };
  void add_block() {
    // Small maps stay small: blocks grow from 8 slots to 256.
    block_slots_ = blocks_.empty() ? 8 : std::min<size_t>(block_slots_ * 2, 256);
    blocks_.push_back(std::make_unique_for_overwrite<Line[]>(slot_ / kLine * block_slots_));
    used_ = 0;
  }

  size_t slot_ = 0;
  size_t block_slots_ = 0;
  size_t used_ = 0;
  Free* free_ = nullptr;
  std::vector<std::unique_ptr<Line[]>> blocks_;  // line-aligned
};

// A standard allocator over a NodePool: single objects from the pool, arrays from the heap.
template <class T>
struct PoolAllocator {
  using value_type = T;
  NodePool* pool;

  explicit PoolAllocator(NodePool* p) noexcept : pool(p) {}
  template <class U>
  PoolAllocator(const PoolAllocator<U>& o) noexcept : pool(o.pool) {}
  T* allocate(size_t n) {
    return static_cast<T*>(n == 1 ? pool->allocate(sizeof(T)) : ::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1) pool->deallocate(p, sizeof(T));
    else ::operator delete(p);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>& o) const noexcept {
    return pool == o.pool;
  }
};

}  // namespace streamhaz::analysis
