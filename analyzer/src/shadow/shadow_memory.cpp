#include "shadow/shadow_memory.h"

#include <algorithm>

namespace streamhaz::analysis {
namespace {

using trace::AccessMode;

bool writes(AccessMode m) { return static_cast<uint8_t>(m) & static_cast<uint8_t>(AccessMode::Write); }

// Earlier op `prev` conflicts with the current access unless it is the same operation or
// happens before it.
bool unordered(const OpStamp& prev, const OpStamp& op, const VectorClock& now) {
  return prev.valid() && !(prev == op) && !now.covers(prev.epoch);
}

// Ordered, but only through synchronisation sites (the over-synchronisation pass).
bool ordered_by_sites(const OpStamp& prev, const OpStamp& op, const VectorClock& now) {
  return prev.valid() && !(prev == op) && now.rests_on_sites(prev.epoch);
}

// The race check's own: the writer; the readers too if the access writes.
inline void check_plain(const ShadowCell& cell, uint64_t lo, uint64_t hi, bool is_write, const OpStamp& op,
                        const VectorClock& now, PairNotes& out) {
  if (unordered(cell.writer, op, now)) out.note(cell.writer, AccessMode::Write, lo, hi);
  if (!is_write) return;
  for (const OpStamp& r : cell.readers)
    if (unordered(r, op, now)) out.note(r, AccessMode::Read, lo, hi);
}

// The over-synchronisation pass's: the writer; every phantom since it if the access writes and is
// no phantom itself, or is a fence, else the latest ones (ShadowCell::phantoms); the readers if it
// writes.
void check(const ShadowCell& cell, uint64_t lo, uint64_t hi, bool is_write, bool meets_phantoms, const OpStamp& op,
           const VectorClock& now, PairNotes& out, PairNotes* ordered) {
  auto meet = [&](const OpStamp& prev, AccessMode role) {
    if (unordered(prev, op, now)) out.note(prev, role, lo, hi);
    else if (ordered && ordered_by_sites(prev, op, now)) ordered->note(prev, role, lo, hi);
  };
  meet(cell.writer, AccessMode::Write);
  if (cell.phantoms)
    for (const OpStamp& p : meets_phantoms ? cell.phantoms->all : cell.phantoms->latest) meet(p, AccessMode::ReadWrite);
  if (!is_write) return;
  for (const OpStamp& r : cell.readers) meet(r, AccessMode::Read);
}

// A walk notes each pair at the first byte it meets it: the pairs by their lowest byte, and at one
// byte the writer, then phantoms, then readers. Pairs met through the indexes (in that order) go
// back to it.
void in_walk_order(std::vector<Conflict>& pairs) {
  std::stable_sort(pairs.begin(), pairs.end(), [](const Conflict& a, const Conflict& b) { return a.lo < b.lo; });
}

}  // namespace

PairNotes* ShadowMemory::start_notes(std::vector<Conflict>& out, std::vector<Conflict>* ordered) {
  out.clear();
  out_notes_.start(&out);
  if (!ordered) {
    ordered_notes_.start(nullptr);
    return nullptr;
  }
  ordered->clear();
  ordered_notes_.start(ordered);
  return &ordered_notes_;
}

void ShadowMemory::access(uint64_t lo, uint64_t hi, AccessMode mode, const OpStamp& op, const VectorClock& now,
                          std::vector<Conflict>& out, std::vector<Conflict>* ordered, Phantom phantom, Ordered scope) {
  if (ordered || phantom != Phantom::No || phantoms_)
    return access_for_pass(lo, hi, mode, op, now, out, ordered, phantom, scope);
  // The race check: no phantom to meet, no ordered pair to hand over.
  start_notes(out, nullptr);
  const bool is_write = writes(mode);
  cells_.update(lo, hi, [&](uint64_t a, uint64_t b, ShadowCell& cell) {
    check_plain(cell, a, b, is_write, op, now, out_notes_);
    if (is_write) {
      cell.writer = op;
      cell.readers.clear();
      return;
    }
    if (keep_all_readers_) {
      if (cell.readers.empty() || !(cell.readers.back() == op)) cell.readers.push_back(op);
      return;
    }
    // Readers ordered before this read are subsumed by it: a later write ordered after this
    // read is ordered after them too, and one that is not races with this read anyway.
    std::erase_if(cell.readers, [&](const OpStamp& r) { return now.covers(r.epoch); });
    cell.readers.push_back(op);
  });
}

void ShadowMemory::access_for_pass(uint64_t lo, uint64_t hi, AccessMode mode, const OpStamp& op, const VectorClock& now,
                                   std::vector<Conflict>& out, std::vector<Conflict>* ordered, Phantom phantom,
                                   Ordered scope) {
  PairNotes* ordered_notes = start_notes(out, ordered);
  const bool is_write = phantom != Phantom::No || writes(mode);
  const bool meets_phantoms = phantom == Phantom::Lasting || (phantom == Phantom::No && is_write);
  // A phantom over all memory meets everything kept: the indexes find what matters, before the
  // phantom is recorded (it replaces some phantoms in `latest`), and the walk only records it.
  const bool all_memory = phantom != Phantom::No && phantoms_ && spans_every_cell(lo, hi);
  const bool by_index = all_memory && !walk_for_phantoms_ && (!ordered || scope == Ordered::LatestPerTimeline);
  if (by_index) {
    // In a cell's order: the writer, the phantoms, the readers.
    meet_indexed(writes_, AccessMode::Write, op, now);
    meet_indexed_phantoms(op, now, meets_phantoms ? PhantomIndex::List::All : PhantomIndex::List::Latest);
    meet_indexed(reads_, AccessMode::Read, op, now);
    // Nothing is noted after this (the walk below only records): the notes' index may go stale.
    in_walk_order(out);
    if (ordered) in_walk_order(*ordered);
  }
  OpStamp kept = op;  // a phantom as the cells keep it
  kept.flags |= kOpPhantom | (phantom == Phantom::Lasting ? kOpLastingPhantom : 0);
  cells_.update(lo, hi, [&](uint64_t a, uint64_t b, ShadowCell& cell) {
    if (!by_index) check(cell, a, b, is_write, meets_phantoms, op, now, out_notes_, ordered_notes);
    if (phantom != Phantom::No) {  // conflicts like a write, hides nothing
      if (!cell.phantoms) cell.phantoms = std::make_unique<Phantoms>();
      Phantoms& ph = *cell.phantoms;
      if (!ph.all.empty() && ph.all.back() == op) return;  // the same kernel's next range
      ph.all.push_back(kept);
      // The latest phantom of a stream stands for the stream's earlier ones here (writes still
      // meet those); fences stay.
      if (phantom == Phantom::Yes)
        std::erase_if(ph.latest, [&](const OpStamp& p) {
          return p.stream_slot == op.stream_slot && !(p.flags & kOpLastingPhantom);
        });
      ph.latest.push_back(kept);
      return;
    }
    if (is_write) {
      cell.writer = op;
      cell.readers.clear();
      cell.phantoms.reset();
      return;
    }
    if (keep_all_readers_) {
      // One operation's ranges are applied one after another: it can only be the last reader.
      if (cell.readers.empty() || !(cell.readers.back() == op)) cell.readers.push_back(op);
      return;
    }
    std::erase_if(cell.readers, [&](const OpStamp& r) { return now.covers(r.epoch); });
    cell.readers.push_back(op);
  });
  if (!phantoms_) return;
  if (phantom != Phantom::No) {
    if (all_memory && phantom == Phantom::Yes) phantom_index_.replaced_in_latest(op);
    phantom_index_.add(kept, lo, hi);
  } else {
    (is_write ? writes_ : reads_).add(op, lo, hi);
  }
}

bool ShadowMemory::spans_every_cell(uint64_t lo, uint64_t hi) const {
  const auto& cells = cells_.cells();
  return cells.empty() || (lo <= cells.begin()->first && hi >= cells.rbegin()->second.end);
}

// What the walk over every cell would note of the phantoms kept: each one its clock leaves
// unordered or orders through sites (phantoms' pairs stay apart: every one), from the first to the
// last byte where a cell still keeps it in `list`.
void ShadowMemory::meet_indexed_phantoms(const OpStamp& op, const VectorClock& now, PhantomIndex::List list) {
  const bool ordered = ordered_notes_.active();
  auto floor = [&](TimelineId t) { return ordered ? now.sites_floor(t) : now.get(t); };
  auto meet = [&](const OpStamp& p, uint64_t lo, uint64_t hi) {
    HeldSpan span;
    if (!phantom_held(p, list, lo, hi, span)) return false;
    if (!now.covers(p.epoch)) out_notes_.note(p, AccessMode::ReadWrite, span.lo, span.hi);
    else ordered_notes_.note(p, AccessMode::ReadWrite, span.lo, span.hi);  // above the floor: rests on sites
    return true;
  };
  phantom_index_.meet(op, list, floor, meet);
}

// Where in [lo, hi) a cell keeps phantom `p` in `list`: the first and the last such cell, looked for
// from either end (a phantom over all memory is usually in the first and the last cell).
bool ShadowMemory::phantom_held(const OpStamp& p, PhantomIndex::List list, uint64_t lo, uint64_t hi,
                                HeldSpan& span) const {
  auto keeps = [&](const ShadowCell& cell) {
    if (!cell.phantoms) return false;
    const std::vector<OpStamp>& kept = list == PhantomIndex::List::All ? cell.phantoms->all : cell.phantoms->latest;
    return std::find(kept.begin(), kept.end(), p) != kept.end();
  };
  const auto& cells = cells_.cells();
  auto first = cells.upper_bound(lo);
  if (first != cells.begin() && std::prev(first)->second.end > lo) --first;
  while (first != cells.end() && first->first < hi && !keeps(first->second.value)) ++first;
  if (first == cells.end() || first->first >= hi) return false;
  span.add(std::max(first->first, lo), std::min(first->second.end, hi));
  for (auto last = cells.lower_bound(hi); last != first;) {
    --last;
    if (keeps(last->second.value)) {
      span.add(std::max(last->first, lo), std::min(last->second.end, hi));
      break;
    }
  }
  return true;
}

// What the walk over every cell would note of the writers (or readers) kept: every one `now`
// leaves unordered, and of those it orders through sites, the latest of each timeline (Ordered).
// Along a timeline the sites an ordered pair rests on only grow (VectorClock::sites_needed_for), so
// when the latest one kept rests on none, no earlier one does.
void ShadowMemory::meet_indexed(AccessIndex& index, AccessMode role, const OpStamp& op, const VectorClock& now) {
  const bool ordered = ordered_notes_.active();
  auto held = [&](const OpStamp& prev, uint64_t lo, uint64_t hi, HeldSpan& span) {
    cells_.visit(lo, hi, [&](uint64_t a, uint64_t b, const ShadowCell& cell) {
      const bool keeps = role == AccessMode::Write
                             ? cell.writer == prev
                             : std::find(cell.readers.begin(), cell.readers.end(), prev) != cell.readers.end();
      if (keeps) span.add(a, b);
    });
  };
  auto unordered_one = [&](const OpStamp& prev, const HeldSpan& span) {
    if (!(prev == op)) out_notes_.note(prev, role, span.lo, span.hi);
  };
  auto covered_one = [&](const OpStamp& prev, const HeldSpan& span) {
    if (ordered_by_sites(prev, op, now)) ordered_notes_.note(prev, role, span.lo, span.hi);
  };
  index.meet(now, ordered, held, unordered_one, covered_one);
}

void ShadowMemory::release(uint64_t lo, uint64_t hi, const OpStamp& op, const VectorClock& now,
                           std::vector<Conflict>& out, std::vector<Conflict>* ordered) {
  PairNotes* ordered_notes = start_notes(out, ordered);
  cells_.visit(lo, hi, [&](uint64_t a, uint64_t b, const ShadowCell& cell) {
    check(cell, a, b, true, true, op, now, out_notes_, ordered_notes);
  });
  cells_.erase(lo, hi);
}

}  // namespace streamhaz::analysis
