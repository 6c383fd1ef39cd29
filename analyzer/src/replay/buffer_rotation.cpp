// The `ipg-buffers N` what-if (docs/sync-and-replay.md, "Changing the number of rotating
// buffers"): find the buffers a run fills on one stream and drains on another in turn (the IPG
// bucket's double buffer), hand each fill-and-drain ("use") to buffer u mod N instead, and, when
// the run ordered each reuse with a wait of its own per buffer (the event mode), re-derive those
// waits for the new rotation. Everything else, other synchronisation included, is kept.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <optional>
#include <unordered_map>

#include "model/footprint.h"
#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {
namespace {

struct Candidate {
  uint64_t base = 0, bytes = 0;
  std::string name;
  size_t alloc_index = 0;  // record index of its allocation (where new buffers are declared)
  uint32_t device = 0;
};

// One fill-and-drain of a buffer: from a write on the filling stream after another stream
// touched it, to the next such write.
struct Use {
  size_t cand = 0;
  size_t first_index = 0;  // record index of its first operation
  uint64_t first_seq = 0;
  trace::StreamId first_stream = 0;
  std::map<trace::StreamId, uint64_t> last_on;  // per stream: its last operation of the use
};

struct CandState {
  std::optional<trace::StreamId> filler;
  std::optional<trace::StreamId> last_stream;
  std::vector<size_t> uses;  // indices into the rank's use list
  bool drained = false;       // some use has an operation on another stream than the filler
};

struct Touch {
  uint64_t lo, hi;
  bool write;
};

// The byte ranges an operation touches (API footprints, kernel Access records).
std::vector<Touch> touches(const trace::Record& r, const std::vector<trace::Access>& accesses) {
  std::vector<ByteRange> ranges;
  if (const auto* m = std::get_if<trace::Memcpy>(&r)) memcpy_footprint(*m, ranges);
  if (const auto* m = std::get_if<trace::Memset>(&r)) memset_footprint(*m, ranges);
  if (const auto* n = std::get_if<trace::Nccl>(&r)) nccl_ranges(*n, ranges);
  std::vector<Touch> out;
  for (const ByteRange& b : ranges)
    out.push_back({b.lo, b.hi, (uint8_t(b.mode) & uint8_t(trace::AccessMode::Write)) != 0});
  for (const trace::Access& a : accesses)  // pointer tier (bytes 0): the pointed-at byte, either way
    out.push_back({a.ptr, a.bytes ? range_end(a.ptr, a.bytes) : a.ptr + 1,
                   a.bytes == 0 || (uint8_t(a.mode) & uint8_t(trace::AccessMode::Write)) != 0});
  return out;
}

struct RankRotation {
  std::vector<Candidate> cands;
  std::vector<Use> uses;                 // every use of the chosen rotation, in issue order
  std::vector<size_t> order;             // the rotation's buffers (candidate indices) in first-use order
  std::vector<std::vector<size_t>> starts;  // per candidate: record indices where its uses start
  std::vector<std::vector<size_t>> use_ids; // per candidate: the global use number of each of its uses
};

// The Access records that follow the kernel at index i.
std::vector<trace::Access> accesses_after(const std::vector<trace::Record>& recs, size_t i, uint64_t seq) {
  std::vector<trace::Access> out;
  for (size_t j = i + 1; j < recs.size(); ++j) {
    if (const auto* a = std::get_if<trace::Access>(&recs[j])) {
      if (a->op_seq == seq) out.push_back(*a);
      continue;
    }
    if (std::holds_alternative<trace::Timing>(recs[j]) || std::holds_alternative<trace::StringDef>(recs[j])) continue;
    break;
  }
  return out;
}

RankRotation find_rotation(const RankRecords& rr, const BufferRotation& spec) {
  const auto& recs = rr.records;
  std::unordered_map<trace::StringId, std::string> strings;
  std::vector<Candidate> allocs, named;
  for (size_t i = 0; i < recs.size(); ++i) {
    if (const auto* s = std::get_if<trace::StringDef>(&recs[i])) strings[s->id] = s->text;
    if (const auto* a = std::get_if<trace::Alloc>(&recs[i]);
        a && a->bytes && (a->kind == trace::AllocKind::Device || a->kind == trace::AllocKind::Managed))
      allocs.push_back({a->ptr, a->bytes, "", i, a->device});
    if (const auto* b = std::get_if<trace::BufferName>(&recs[i]); b && b->bytes) {
      named.push_back({b->ptr, b->bytes, strings[b->name], i, 0});
      for (Candidate& c : allocs)
        if (c.base == b->ptr && c.bytes == b->bytes) {
          c.name = strings[b->name];
          named.back().alloc_index = c.alloc_index;
          named.back().device = c.device;
        }
    }
  }
  RankRotation rot;
  if (spec.name.empty()) {
    rot.cands = allocs;
  } else {
    for (const Candidate& c : named)
      if (wildcard_match(spec.name, c.name)) rot.cands.push_back(c);
  }
  std::map<uint64_t, size_t> by_base;
  for (size_t c = 0; c < rot.cands.size(); ++c) by_base[rot.cands[c].base] = c;  // a later one replaces

  // Uses of every candidate, in one walk.
  std::vector<CandState> state(rot.cands.size());
  std::vector<Use> uses;
  for (size_t i = 0; i < recs.size(); ++i) {
    const trace::OpCommon* op = trace::op_common(recs[i]);
    if (!op) continue;
    const auto acc = std::holds_alternative<trace::Kernel>(recs[i]) ? accesses_after(recs, i, op->seq)
                                                                    : std::vector<trace::Access>{};
    std::map<size_t, bool> hit;  // candidate -> written
    for (const Touch& t : touches(recs[i], acc)) {
      auto it = by_base.upper_bound(t.lo);
      if (it != by_base.begin()) --it;
      for (; it != by_base.end() && it->first < t.hi; ++it) {
        const Candidate& c = rot.cands[it->second];
        if (range_end(c.base, c.bytes) <= t.lo) continue;
        hit[it->second] = hit[it->second] || t.write;
      }
    }
    for (const auto& [c, write] : hit) {
      CandState& st = state[c];
      if (write && !st.filler) st.filler = op->stream;
      const bool fresh = st.uses.empty() || (write && op->stream == *st.filler && st.last_stream &&
                                             *st.last_stream != *st.filler);
      if (fresh) {
        st.uses.push_back(uses.size());
        uses.push_back(Use{c, i, op->seq, op->stream, {}});
      }
      Use& u = uses[st.uses.back()];
      u.last_on[op->stream] = op->seq;
      if (st.filler && op->stream != *st.filler) st.drained = true;
      st.last_stream = op->stream;
    }
  }

  // Rotations: drained buffers of one size and one filling stream whose uses go round them in a
  // fixed order. The one with the most uses is the run's.
  std::map<std::pair<uint64_t, trace::StreamId>, std::vector<size_t>> groups;
  for (size_t c = 0; c < rot.cands.size(); ++c)
    if (state[c].drained && state[c].filler) groups[{rot.cands[c].bytes, *state[c].filler}].push_back(c);
  const size_t min_buffers = spec.name.empty() ? 2 : 1;
  size_t best_uses = 0;
  bool tie = false;
  std::vector<size_t> best_order;
  std::vector<Use> best;
  for (const auto& [key, members] : groups) {
    if (members.size() < min_buffers) continue;
    std::vector<Use> list;
    for (size_t c : members)
      for (size_t u : state[c].uses) list.push_back(uses[u]);
    std::sort(list.begin(), list.end(), [](const Use& a, const Use& b) { return a.first_index < b.first_index; });
    const size_t k = members.size();
    std::vector<size_t> order;
    bool round = list.size() >= k;
    for (size_t u = 0; round && u < list.size(); ++u) {
      if (u < k) {
        round = std::find(order.begin(), order.end(), list[u].cand) == order.end();
        order.push_back(list[u].cand);
      } else {
        round = list[u].cand == order[u % k];
      }
    }
    if (!round) continue;
    if (list.size() > best_uses) {
      best_uses = list.size();
      best_order = order;
      best = std::move(list);
      tie = false;
    } else if (list.size() == best_uses) {
      tie = true;
    }
  }
  if (best.empty())
    throw WhatIfError(fmt::format(
        "ipg-buffers: rank {} has no rotating buffers: {} filled on one stream, drained on another and reused in "
        "a fixed round{}",
        rr.rank, spec.name.empty() ? "no two or more allocations of one size" : "no buffer named '" + spec.name + "'",
        spec.name.empty() ? " (name=GLOB picks them by name)" : ""));
  if (tie)
    throw WhatIfError(fmt::format("ipg-buffers: rank {} has more than one set of rotating buffers; pick one with "
                                  "name=GLOB",
                                  rr.rank));
  rot.order = best_order;
  rot.uses = std::move(best);
  rot.starts.assign(rot.cands.size(), {});
  rot.use_ids.assign(rot.cands.size(), {});
  for (size_t u = 0; u < rot.uses.size(); ++u) {
    rot.starts[rot.uses[u].cand].push_back(rot.uses[u].first_index);
    rot.use_ids[rot.uses[u].cand].push_back(u);
  }
  return rot;
}

// The name of new buffer `j` of a rotation whose buffers are named `prefix[i]` (or not at all).
std::string new_name(const std::vector<Candidate>& cands, const std::vector<size_t>& order, size_t j) {
  std::string prefix;
  for (size_t c : order) {
    const std::string& n = cands[c].name;
    const size_t open = n.rfind('[');
    const std::string p = open != std::string::npos && n.back() == ']' ? n.substr(0, open) : std::string();
    if (p.empty() || (!prefix.empty() && p != prefix)) return fmt::format("rotating buffer [{}]", j);
    prefix = p;
  }
  return fmt::format("{}[{}]", prefix, j);
}

// Where each slot of the new rotation lives: the old buffers first, then fresh ranges above
// every allocation of the rank; the new ones are declared after the last old one's allocation.
struct Slots {
  std::vector<uint64_t> base;
  uint64_t bytes = 0;
  size_t declare_after = 0;  // record index
};
Slots place_slots(const std::vector<trace::Record>& recs, const RankRotation& rot, size_t kn) {
  Slots s;
  const size_t k = rot.order.size();
  s.bytes = rot.cands[rot.order[0]].bytes;
  uint64_t top = 0;
  for (const trace::Record& r : recs)
    if (const auto* a = std::get_if<trace::Alloc>(&r)) top = std::max(top, range_end(a->ptr, a->bytes));
  for (size_t c : rot.order) s.declare_after = std::max(s.declare_after, rot.cands[c].alloc_index);
  constexpr uint64_t kAlign = 2 << 20;
  const uint64_t stride = (s.bytes + kAlign - 1) / kAlign * kAlign;
  s.base.resize(kn);
  for (size_t j = 0; j < kn; ++j)
    s.base[j] = j < k ? rot.cands[rot.order[j]].base : (top + kAlign - 1) / kAlign * kAlign + (j - k) * stride;
  return s;
}

// The rotation's own waits: a wait on an event recorded only right after uses of one buffer
// (its last operation on the recording stream), waited on only right before that buffer's next
// use. Dedicated per-buffer events are the event mode's; other waits (a whole-stream wait as in
// serialize) are kept as they are.
std::set<uint64_t> find_rotation_waits(const std::vector<trace::Record>& recs, const RankRotation& rot) {
  std::unordered_map<uint64_t, size_t> last_of_use;  // seq -> candidate
  std::unordered_map<uint64_t, size_t> first_of_use;
  for (const Use& u : rot.uses) {
    for (const auto& [s, seq] : u.last_on)
      if (s != u.first_stream) last_of_use[seq] = u.cand;
    first_of_use[u.first_seq] = u.cand;
  }
  std::unordered_map<trace::StreamId, uint64_t> last_op;
  std::unordered_map<trace::EventId, std::optional<size_t>> dedicated;  // event -> its buffer (nullopt: not)
  std::vector<std::pair<uint64_t, trace::EventId>> waits;             // (wait seq, event)
  std::unordered_map<trace::StreamId, std::vector<size_t>> pending;   // waits by stream until its next op
  std::unordered_map<uint64_t, uint64_t> next_after_wait;
  for (const trace::Record& r : recs) {
    if (const trace::OpCommon* op = trace::op_common(r)) {
      last_op[op->stream] = op->seq;
      for (size_t w : pending[op->stream]) next_after_wait[waits[w].first] = op->seq;
      pending[op->stream].clear();
    } else if (const auto* e = std::get_if<trace::EventRecord>(&r)) {
      auto it = last_op.find(e->stream);
      std::optional<size_t> buf;
      if (it != last_op.end())
        if (auto l = last_of_use.find(it->second); l != last_of_use.end()) buf = l->second;
      auto [d, fresh] = dedicated.try_emplace(e->event, buf);
      if (!fresh && d->second != buf) d->second.reset();
      if (!buf) d->second.reset();
    } else if (const auto* w = std::get_if<trace::EventWait>(&r)) {
      pending[w->stream].push_back(waits.size());
      waits.push_back({w->seq, w->event});
    }
  }
  std::set<uint64_t> rotation_waits;
  for (const auto& [seq, event] : waits) {
    auto d = dedicated.find(event);
    auto n = next_after_wait.find(seq);
    if (d == dedicated.end() || !d->second || n == next_after_wait.end()) continue;
    auto f = first_of_use.find(n->second);
    if (f != first_of_use.end() && f->second == *d->second) rotation_waits.insert(seq);
  }
  return rotation_waits;
}

// Each use waits for the last operations (on other streams) of the use before it in its new
// buffer, as the event mode places them. Counts the waits added and those that cannot be
// placed (the earlier use is issued later).
std::pair<size_t, size_t> wait_per_new_buffer(int rank, const RankRotation& rot, size_t kn, WhatIf& edits) {
  size_t added = 0, unplaceable = 0;
  for (size_t u = kn; u < rot.uses.size(); ++u) {
    const Use& prev = rot.uses[u - kn];
    const Use& cur = rot.uses[u];
    for (const auto& [s, seq] : prev.last_on) {
      if (s == cur.first_stream) continue;
      if (seq >= cur.first_seq) {
        ++unplaceable;
        continue;
      }
      edits.add.push_back(AddedWait{rank, seq, cur.first_seq});
      ++added;
    }
  }
  return {added, unplaceable};
}

// The rank's records with every pointer into a rotation buffer moved to its use's new slot, and
// the new buffers allocated and named.
RankRecords move_to_slots(const RankRecords& rr, const RankRotation& rot, const Slots& slots, size_t kn) {
  const auto& recs = rr.records;
  const size_t k = rot.order.size();
  auto use_at = [&](size_t c, size_t index) -> std::optional<size_t> {
    const auto& st = rot.starts[c];
    auto it = std::upper_bound(st.begin(), st.end(), index);
    if (it == st.begin()) return std::nullopt;
    return rot.use_ids[c][static_cast<size_t>(it - st.begin()) - 1];
  };
  std::map<uint64_t, size_t> member;  // base -> candidate, rotation buffers only
  for (size_t c : rot.order) member[rot.cands[c].base] = c;
  auto moved = [&](uint64_t p, size_t index) -> uint64_t {
    auto it = member.upper_bound(p);
    if (it == member.begin()) return p;
    --it;
    const Candidate& c = rot.cands[it->second];
    if (p >= range_end(c.base, c.bytes)) return p;
    const auto u = use_at(it->second, index);
    if (!u) return p;
    return p - c.base + slots.base[*u % kn];
  };
  RankRecords edited;
  edited.rank = rr.rank;
  edited.path = rr.path;
  edited.records.reserve(recs.size() + 3 * kn);
  trace::StringId next_string = 1;
  for (const trace::Record& r : recs)
    if (const auto* s = std::get_if<trace::StringDef>(&r)) next_string = std::max(next_string, s->id + 1);
  size_t op_index = 0;  // the record index of the operation the following Access records belong to
  for (size_t i = 0; i < recs.size(); ++i) {
    trace::Record r = recs[i];
    if (trace::op_common(r)) op_index = i;
    std::visit([&](auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, trace::Memcpy>) {
        x.dst = moved(x.dst, i);
        x.src = moved(x.src, i);
      } else if constexpr (std::is_same_v<T, trace::Memset>) {
        x.dst = moved(x.dst, i);
      } else if constexpr (std::is_same_v<T, trace::Nccl>) {
        x.sendbuf = moved(x.sendbuf, i);
        x.recvbuf = moved(x.recvbuf, i);
      } else if constexpr (std::is_same_v<T, trace::Access>) {
        x.ptr = moved(x.ptr, op_index);
      } else if constexpr (std::is_same_v<T, trace::Kernel>) {
        // Raw argument bytes (static tier): aligned 8-byte words that point into a buffer.
        for (size_t off = 0; off + 8 <= x.params.size(); off += 8) {
          uint64_t v;
          std::memcpy(&v, x.params.data() + off, 8);
          const uint64_t m = moved(v, i);
          if (m != v) std::memcpy(x.params.data() + off, &m, 8);
        }
      }
    }, r);
    edited.records.push_back(std::move(r));
    if (i == slots.declare_after)
      for (size_t j = k; j < kn; ++j) {
        const trace::StringId id = next_string++;
        edited.records.push_back(trace::StringDef{id, new_name(rot.cands, rot.order, j)});
        edited.records.push_back(trace::Alloc{0, slots.base[j], slots.bytes, rot.cands[rot.order[0]].device,
                                              trace::AllocKind::Device, 0});
        edited.records.push_back(trace::BufferName{slots.base[j], slots.bytes, id});
      }
  }
  return edited;
}

std::string rotation_note(const RankRecords& rr, const RankRotation& rot, const Slots& slots, size_t kn,
                          size_t rotation_waits, size_t added, size_t unplaceable) {
  std::string names;
  for (size_t c : rot.order)
    names += (names.empty() ? "" : ", ") +
             (rot.cands[c].name.empty() ? fmt::format("allocation 0x{:x}", rot.cands[c].base) : rot.cands[c].name);
  return fmt::format(
      "rank {}: {} rotating buffers of {} bytes ({}), {} uses, now over {} buffers; {}", rr.rank, rot.order.size(),
      slots.bytes, names, rot.uses.size(), kn,
      rotation_waits == 0
          ? "no per-buffer waits found: the run's synchronisation is kept as it is"
          : fmt::format("{} per-buffer waits replaced by {}{}", rotation_waits, added,
                        unplaceable ? fmt::format(" ({} could not be placed: the earlier use is issued later)", unplaceable)
                                    : std::string()));
}

}  // namespace

std::vector<RankRecords> rotate_buffers(const std::vector<RankRecords>& run, const BufferRotation& spec, WhatIf& edits,
                                        std::vector<std::string>* notes) {
  if (spec.buffers < 1) throw WhatIfError("ipg-buffers needs a count of 1 or more");
  std::vector<RankRecords> out;
  out.reserve(run.size());
  for (const RankRecords& rr : run) {
    const RankRotation rot = find_rotation(rr, spec);
    const size_t kn = static_cast<size_t>(spec.buffers);
    const Slots slots = place_slots(rr.records, rot, kn);
    const std::set<uint64_t> rotation_waits = find_rotation_waits(rr.records, rot);
    for (uint64_t seq : rotation_waits) edits.drop.insert({rr.rank, seq});
    const auto [added, unplaceable] =
        rotation_waits.empty() ? std::pair<size_t, size_t>{0, 0} : wait_per_new_buffer(rr.rank, rot, kn, edits);
    RankRecords edited = move_to_slots(rr, rot, slots, kn);
    if (notes) notes->push_back(rotation_note(rr, rot, slots, kn, rotation_waits.size(), added, unplaceable));
    out.push_back(std::move(edited));
  }
  return out;
}

}  // namespace streamhaz::analysis
