#include "sync/minimal_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "streamhaz/analysis/kernel_name.h"
#include "streamhaz/analysis/nvtx_path.h"
#include "streamhaz/analysis/sync.h"
#include "sync/in_parallel.h"
#include "sync/sync_sites.h"

namespace streamhaz::analysis {
namespace {

using Clock = std::vector<uint32_t>;

void join(Clock& a, const Clock& b) {
  if (a.size() < b.size()) a.resize(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i) a[i] = std::max(a[i], b[i]);
}

uint32_t at(const Clock& c, size_t i) { return i < c.size() ? c[i] : 0; }

}  // namespace

// A small happens-before pass (stream order, kept event waits and host synchronisations, the
// waits placed so far). It leaves out collectives and legacy-stream edges, so it may place a
// wait the full rules would not need, never miss one; the caller re-checks with the engine.
std::vector<AddedWait> place_waits(const std::vector<RankRecords>& run, const PairSet& pairs,
                                   const std::set<std::pair<int, uint64_t>>& dropped, unsigned jobs) {
  // Each rank on its own; its waits follow the ranks' before it.
  std::vector<std::vector<AddedWait>> of_rank(run.size());
  for_each_index(run.size(), jobs, [&](size_t ri) {
    const RankRecords& rr = run[ri];
    std::vector<AddedWait>& out = of_rank[ri];
    std::unordered_map<uint64_t, std::vector<uint64_t>> earlier_of;  // b -> a's
    // The rank's pairs only (pairs are sorted by rank): every rank looking at every pair would
    // cost ranks x pairs.
    std::unordered_set<uint64_t> earlier;  // the only operations whose clocks are looked up
    for (const auto& [rank, a, b] : pairs.of_rank(rr.rank)) {
      earlier_of[b].push_back(a);
      earlier.insert(a);
    }
    if (earlier_of.empty()) return;
    std::unordered_map<trace::StreamId, size_t> index;
    std::vector<Clock> clocks;
    Clock host;
    std::unordered_map<trace::EventId, Clock> events;
    struct OpAt {
      size_t stream;
      uint32_t tick;
      Clock after;
    };
    std::unordered_map<uint64_t, OpAt> ops;
    std::unordered_map<uint64_t, bool> device_allocs;  // base -> device or managed
    auto slot = [&](trace::StreamId s) {
      auto [it, fresh] = index.try_emplace(s, clocks.size());
      if (fresh) clocks.emplace_back();
      return it->second;
    };
    for (const trace::Record& r : rr.records) {
      if (const trace::OpCommon* op = trace::op_common(r)) {
        const size_t y = slot(op->stream);
        join(clocks[y], host);
        if (auto it = earlier_of.find(op->seq); it != earlier_of.end()) {
          std::map<size_t, uint64_t> latest;  // source stream -> latest uncovered earlier op
          for (uint64_t a : it->second) {
            auto o = ops.find(a);
            if (o == ops.end() || o->second.stream == y) continue;  // host-side, or stream order
            if (at(clocks[y], o->second.stream) >= o->second.tick) continue;
            auto& best = latest[o->second.stream];
            if (!best || ops[best].tick < o->second.tick) best = a;
          }
          for (const auto& [x, a] : latest) {
            out.push_back(AddedWait{rr.rank, a, op->seq});
            join(clocks[y], ops[a].after);
          }
        }
        Clock& c = clocks[y];
        if (c.size() <= y) c.resize(y + 1, 0);
        ++c[y];
        if (earlier.count(op->seq)) ops[op->seq] = OpAt{y, c[y], c};
        continue;
      }
      const bool kind = sync_kind(r).has_value();
      const uint64_t seq = std::visit([](const auto& x) -> uint64_t {
        if constexpr (requires { x.seq; }) return x.seq;
        else return 0;
      }, r);
      if (kind && dropped.count({rr.rank, seq})) continue;
      if (const auto* e = std::get_if<trace::EventRecord>(&r)) {
        const size_t y = slot(e->stream);
        join(clocks[y], host);
        events[e->event] = clocks[y];
      } else if (const auto* w = std::get_if<trace::EventWait>(&r)) {
        if (auto it = events.find(w->event); it != events.end()) join(clocks[slot(w->stream)], it->second);
      } else if (const auto* s = std::get_if<trace::EventSync>(&r)) {
        if (auto it = events.find(s->event); it != events.end()) join(host, it->second);
      } else if (const auto* s = std::get_if<trace::StreamSync>(&r)) {
        join(host, clocks[slot(s->stream)]);
      } else if (std::holds_alternative<trace::DeviceSync>(r)) {
        for (const Clock& c : clocks) join(host, c);
      } else if (const auto* a = std::get_if<trace::Alloc>(&r)) {
        device_allocs[a->ptr] = a->kind == trace::AllocKind::Device || a->kind == trace::AllocKind::Managed;
      } else if (const auto* f = std::get_if<trace::Free>(&r)) {
        // As the engine: cudaFree of a traced device allocation waits for the device.
        auto it = device_allocs.find(f->ptr);
        if (it != device_allocs.end() && it->second &&
            (f->kind == trace::AllocKind::Device || f->kind == trace::AllocKind::Managed))
          for (const Clock& c : clocks) join(host, c);
        if (it != device_allocs.end()) device_allocs.erase(it);
      }
    }
  });
  std::vector<AddedWait> out;
  for (const std::vector<AddedWait>& part : of_rank) out.insert(out.end(), part.begin(), part.end());
  return out;
}

std::vector<std::string> describe_waits(const std::vector<RankRecords>& run, const std::vector<AddedWait>& waits,
                                        const PairSet& pairs,
                                        const std::map<Pair, uint64_t>& first_byte, const RecordPlaces* places,
                                        unsigned jobs) {
  if (places && !places->of(run)) places = nullptr;
  struct Pattern {
    uint64_t count = 0;
    std::set<int> ranks;
    std::set<std::string_view> buffers;  // views of the records' text (and of literals)
  };
  struct Patterns {
    std::map<std::string, Pattern> of_text;
    std::vector<std::string> order;  // by first use
  };
  std::map<int, std::vector<const AddedWait*>> waits_of;  // by rank: not every wait for every rank
  for (const AddedWait& w : waits) waits_of[w.rank].push_back(&w);
  // Each rank's patterns on its own, then merged in rank order.
  std::vector<Patterns> of_rank(run.size());
  for_each_index(run.size(), jobs, [&](size_t ri) {
    std::map<std::string, Pattern>& patterns = of_rank[ri].of_text;
    std::vector<std::string>& order = of_rank[ri].order;
    const RankRecords& rr = run[ri];
    const auto mine = waits_of.find(rr.rank);
    if (mine == waits_of.end()) return;
    // Views of the records' own text; of the operations, only those the waits name.
    std::unordered_map<trace::StringId, std::string_view> strings;
    std::unordered_map<trace::StreamId, std::string_view> streams;
    std::unordered_map<uint64_t, const trace::Record*> ops;
    std::unordered_set<uint64_t> named;
    for (const AddedWait* w : mine->second) named.insert({w->after_seq, w->before_seq});
    std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string_view>> names;  // [lo, hi) -> buffer
    auto read = [&](const trace::Record& r) {
      if (const auto* s = std::get_if<trace::StringDef>(&r)) strings[s->id] = s->text;
      else if (const auto* n = std::get_if<trace::StreamName>(&r)) streams[n->stream] = strings[n->name];
      else if (const auto* b = std::get_if<trace::BufferName>(&r)) names.push_back({{b->ptr, b->ptr + b->bytes}, strings[b->name]});
      else if (const trace::OpCommon* op = trace::op_common(r); op && named.count(op->seq)) ops[op->seq] = &r;
    };
    if (places) {  // the name records and the named operations alone
      for (size_t i : places->names(ri)) read(rr.records[i]);
      const auto& placed = places->ops(ri);
      for (uint64_t seq : named) {
        // The last record of the seq, as the reading in record order keeps.
        auto end = std::upper_bound(placed.begin(), placed.end(), std::pair<uint64_t, size_t>{seq, SIZE_MAX});
        if (end != placed.begin() && std::prev(end)->first == seq) ops[seq] = &rr.records[std::prev(end)->second];
      }
    } else {
      for (const trace::Record& r : rr.records) read(r);
    }
    // The buffer holding a byte: the last name given to a range that holds it. Looked up once per
    // byte: the pairs of a run start at the same few bytes over and over.
    std::unordered_map<uint64_t, std::string_view> buffer_of;
    auto buffer_at = [&](uint64_t byte) {
      auto [it, fresh] = buffer_of.try_emplace(byte, "an unnamed buffer");
      if (fresh)
        for (const auto& [range, name] : names)
          if (byte >= range.first && byte < range.second) it->second = name;
      return it->second;
    };
    // The pairs this rank's waits order, by their later operation.
    std::unordered_map<uint64_t, std::vector<const Pair*>> pairs_before;
    for (const Pair& p : pairs.of_rank(rr.rank)) pairs_before[std::get<2>(p)].push_back(&p);
    auto stream = [&](trace::StreamId s) {
      return streams.count(s) && !streams[s].empty() ? std::string(streams[s]) : fmt::format("stream {}", s);
    };
    // Demangled once per kernel name: the waits of a run name the same few kernels over and over.
    std::unordered_map<trace::StringId, std::string> readable;
    auto kernel_name = [&](trace::StringId name) -> const std::string& {
      auto [it, fresh] = readable.try_emplace(name);
      if (fresh) it->second = readable_kernel_name(strings[name]);
      return it->second;
    };
    auto label = [&](uint64_t seq) {
      const trace::Record& r = *ops.at(seq);
      const trace::OpCommon* op = trace::op_common(r);
      std::string l;
      if (const auto* k = std::get_if<trace::Kernel>(&r)) l = "kernel " + kernel_name(k->name);
      else if (const auto* m = std::get_if<trace::Memcpy>(&r)) l = fmt::format("memcpy {}", trace::to_string(m->kind));
      else if (std::holds_alternative<trace::Memset>(r)) l = "memset";
      else if (const auto* n = std::get_if<trace::Nccl>(&r)) l = trace::to_string(n->kind);
      else l = "operation";
      if (const std::string nvtx = op->nvtx ? nvtx_path(std::string(strings[op->nvtx])) : ""; !nvtx.empty())
        l += fmt::format(" (NVTX {})", nvtx);
      return l;
    };
    // A wait's text depends on its two operations' streams, kinds, kernel names and NVTX paths
    // alone (the rank's names are all read by now): formatted once per such shape, not per wait
    // (a run's waits repeat the same few shapes every step).
    struct OpShape {
      trace::StreamId stream = 0;
      size_t type = 0;      // the record's alternative
      uint64_t detail = 0;  // kernel name, copy kind or collective kind
      trace::StringId nvtx = 0;
      auto operator<=>(const OpShape&) const = default;
    };
    auto shape = [&](uint64_t seq) {
      const trace::Record& r = *ops.at(seq);
      OpShape s{trace::op_common(r)->stream, r.index(), 0, trace::op_common(r)->nvtx};
      if (const auto* k = std::get_if<trace::Kernel>(&r)) s.detail = k->name;
      else if (const auto* m = std::get_if<trace::Memcpy>(&r)) s.detail = static_cast<uint64_t>(m->kind);
      else if (const auto* n = std::get_if<trace::Nccl>(&r)) s.detail = static_cast<uint64_t>(n->kind);
      return s;
    };
    std::map<std::pair<OpShape, OpShape>, Pattern*> pattern_of;
    for (const AddedWait* wp : mine->second) {
      const AddedWait& w = *wp;
      if (!ops.count(w.after_seq) || !ops.count(w.before_seq)) continue;
      auto [known, unseen] = pattern_of.try_emplace({shape(w.after_seq), shape(w.before_seq)}, nullptr);
      if (unseen) {
        const std::string text =
            fmt::format("record an event on {} after {}; make {} wait for it before {}",
                        stream(trace::op_common(*ops[w.after_seq])->stream), label(w.after_seq),
                        stream(trace::op_common(*ops[w.before_seq])->stream), label(w.before_seq));
        auto [it, fresh] = patterns.try_emplace(text);
        if (fresh) order.push_back(text);
        known->second = &it->second;
      }
      Pattern& pattern = *known->second;
      ++pattern.count;
      pattern.ranks.insert(rr.rank);
      // The buffers of the pairs this wait orders (those ending at its later operation).
      const auto ordered = pairs_before.find(w.before_seq);
      if (ordered == pairs_before.end()) continue;
      for (const auto* p : ordered->second) {
        auto fb = first_byte.find(*p);
        if (fb == first_byte.end() || fb->second == 0) {
          pattern.buffers.insert("memory a kernel without footprint may touch");
          continue;
        }
        pattern.buffers.insert(buffer_at(fb->second));
      }
    }
  });
  std::map<std::string, Pattern> patterns;
  std::vector<std::string> order;
  for (Patterns& part : of_rank)
    for (const std::string& text : part.order) {
      const Pattern& from = part.of_text[text];
      auto [it, fresh] = patterns.try_emplace(text);
      if (fresh) order.push_back(text);
      it->second.count += from.count;
      it->second.ranks.insert(from.ranks.begin(), from.ranks.end());
      it->second.buffers.insert(from.buffers.begin(), from.buffers.end());
    }
  std::vector<std::string> lines;
  for (const std::string& text : order) {
    const Pattern& p = patterns[text];
    std::string ranks;
    for (int r : p.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    std::string buffers;
    for (std::string_view b : p.buffers) {
      if (!buffers.empty()) buffers += ", ";
      buffers += b;
    }
    lines.push_back(fmt::format("{} ({} time{}, rank{} {}; orders {})", text, p.count, p.count == 1 ? "" : "s",
                                p.ranks.size() == 1 ? "" : "s", ranks, buffers.empty() ? "-" : buffers));
  }
  return lines;
}

}  // namespace streamhaz::analysis
