// Values keyed by one rank's call sequence numbers. A replay writes and reads one per operation
// of every rank, over and over (the fit, the run as traced, each what-if): a hash node per entry
// cost more than the simulation's own arithmetic. The seqs of a run's records are nearly
// consecutive, so the table keeps them in an array over the span it is given, and any seq outside
// that span (a record added by a what-if; every seq of a table given none, for sparse values) in
// an ordered map beside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

namespace streamhaz::analysis {

template <class T>
class SeqTable {
 public:
  SeqTable() = default;
  // Room for seqs [lo, hi] (hi < lo: none); entries already there are kept.
  void span(uint64_t lo, uint64_t hi) {
    if (hi < lo) return;
    SeqTable grown;
    grown.lo_ = lo;
    grown.values_.resize(hi - lo + 1);
    grown.present_.resize(hi - lo + 1, 0);
    for_each([&](uint64_t seq, const T& v) { grown[seq] = v; });
    *this = std::move(grown);
  }

  // The entry of `seq`, made (value-initialised) if there is none.
  T& operator[](uint64_t seq) {
    if (in_span(seq)) {
      const size_t i = seq - lo_;
      if (!present_[i]) present_[i] = 1, ++size_;
      return values_[i];
    }
    auto [it, fresh] = apart_.try_emplace(seq);
    size_ += fresh;
    return it->second;
  }
  const T* find(uint64_t seq) const {
    if (in_span(seq)) return present_[seq - lo_] ? &values_[seq - lo_] : nullptr;
    auto it = apart_.find(seq);
    return it == apart_.end() ? nullptr : &it->second;
  }
  T* find(uint64_t seq) { return const_cast<T*>(static_cast<const SeqTable&>(*this).find(seq)); }
  bool contains(uint64_t seq) const { return find(seq) != nullptr; }
  const T& at(uint64_t seq) const {
    if (const T* v = find(seq)) return *v;
    throw std::out_of_range("SeqTable::at: no entry for this seq");
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Every entry in seq order: f(seq, value).
  template <class F>
  void for_each(F&& f) const { each(*this, f); }
  template <class F>
  void for_each(F&& f) { each(*this, f); }

 private:
  bool in_span(uint64_t seq) const { return seq >= lo_ && seq - lo_ < values_.size(); }
  template <class Self, class F>
  static void each(Self& self, F& f) {
    auto apart = self.apart_.begin();
    for (; apart != self.apart_.end() && apart->first < self.lo_; ++apart) f(apart->first, apart->second);
    for (size_t i = 0; i < self.values_.size(); ++i)
      if (self.present_[i]) f(self.lo_ + i, self.values_[i]);
    for (; apart != self.apart_.end(); ++apart) f(apart->first, apart->second);
  }

  uint64_t lo_ = 0;
  std::vector<T> values_;
  std::vector<uint8_t> present_;
  std::map<uint64_t, T> apart_;
  size_t size_ = 0;
};

}  // namespace streamhaz::analysis
