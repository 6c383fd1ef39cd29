// An open-addressing map from non-zero 64-bit keys (correlation ids, function handles) to small
// values, for the recorder's per-launch lookups: one flat array, linear probing, no node
// allocation per entry (std::unordered_map allocates on every insert and frees on erase).
// Erase shifts the following entries back, so there are no tombstones to sweep.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace streamhaz::tracer {

template <class V> class FlatMap64 {
 public:
  // The value for `key`, or null. Key 0 is never stored.
  V* find(uint64_t key) {
    if (size_ == 0 || key == 0) return nullptr;
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }
  // Inserts (key, value) unless key is present; returns the stored value and whether it is new.
  std::pair<V*, bool> try_emplace(uint64_t key, V value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = slot_of(key);
    for (; slots_[i].key != 0; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
    }
    slots_[i] = Slot{key, std::move(value)};
    ++size_;
    return {&slots_[i].value, true};
  }
  void insert_or_assign(uint64_t key, V value) {
    auto [v, fresh] = try_emplace(key, value);
    if (!fresh) *v = std::move(value);
  }
  bool erase(uint64_t key) {
    if (size_ == 0 || key == 0) return false;
    size_t i = slot_of(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == 0) return false;
      i = (i + 1) & mask_;
    }
    // Backward shift: move up every later entry of the run that may sit in the hole.
    for (size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      const size_t home = slot_of(slots_[j].key);
      // Entry j may fill hole i if its home is not in (i, j] (cyclically).
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (stays) continue;
      slots_[i] = std::move(slots_[j]);
      i = j;
    }
    slots_[i] = Slot{};
    --size_;
    return true;
  }
  // Erases every entry for which pred(key, value) holds; returns how many.
  template <class Pred> size_t erase_if(Pred pred) {
    std::vector<uint64_t> doomed;
    for (const Slot& s : slots_)
      if (s.key != 0 && pred(s.key, s.value)) doomed.push_back(s.key);
    for (uint64_t key : doomed) erase(key);  // erase shifts entries: not while scanning
    return doomed.size();
  }
  // Forgets every entry but keeps the memory.
  void clear() {
    if (size_ == 0) return;
    for (Slot& s : slots_) s = Slot{};
    size_ = 0;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Slot {
    uint64_t key = 0;
    V value{};
  };
  size_t slot_of(uint64_t key) const { return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_); }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t n = old.empty() ? 64 : old.size() * 2;
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    shift_ = 64 - __builtin_ctzll(n);
    size_ = 0;
    for (Slot& s : old) {
      if (s.key != 0) try_emplace(s.key, std::move(s.value));
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace streamhaz::tracer
