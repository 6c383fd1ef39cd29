// What-if specs: parsing, printing, and applying the record edits (drops, added waits).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "streamhaz/analysis/replay.h"
#include "model/stream_kind.h"

namespace streamhaz::analysis {
namespace {

// Splits `line` into words; a value may be quoted ("reduction stream") to hold spaces.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && c == '#') {
      break;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (quoted) throw WhatIfError("unterminated quote in '" + line + "'");
  if (any) out.push_back(cur);
  return out;
}

uint64_t number(const std::string& key, const std::string& v) {
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) || v.size() > 19)
    throw WhatIfError(fmt::format("{}= needs a whole number, found '{}'", key, v));
  return std::stoull(v);
}

// Ranks are ints: a larger number is refused, not cut to one (2147483648 was rank 0).
int rank_number(const std::string& v) {
  const uint64_t n = number("rank", v);
  if (n > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    throw WhatIfError(fmt::format("rank= is at most {}, found '{}'", std::numeric_limits<int>::max(), v));
  return static_cast<int>(n);
}

double factor_of(const std::string& v) {
  size_t used = 0;
  double f = 0;
  try {
    f = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !(f > 0) || f > 1e6) throw WhatIfError("factor= needs a number above 0, found '" + v + "'");
  return f;
}

struct SyncKindFacts {
  SyncKind kind;
  const char* name;
  bool host;
};
constexpr SyncKindFacts kSyncKinds[] = {
#define STREAMHAZ_SYNC_FACTS(kind, name, host) {SyncKind::kind, name, host},
    STREAMHAZ_SYNC_KINDS(STREAMHAZ_SYNC_FACTS)
#undef STREAMHAZ_SYNC_FACTS
};

std::string quoted(const std::string& s) {
  return s.find_first_of(" \t#") == std::string::npos && !s.empty() ? s : "\"" + s + "\"";
}

}  // namespace

const char* to_string(SyncKind k) { return kSyncKinds[static_cast<size_t>(k)].name; }
bool blocks_host(SyncKind k) { return kSyncKinds[static_cast<size_t>(k)].host; }

std::optional<SyncKind> sync_kind_named(std::string_view name) {
  for (const SyncKindFacts& f : kSyncKinds)
    if (name == f.name) return f.kind;
  return std::nullopt;
}

std::string sync_kind_names() {
  std::string names;
  for (const SyncKindFacts& f : kSyncKinds) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

std::optional<SyncKind> sync_kind(const trace::Record& r) {
  if (std::holds_alternative<trace::EventWait>(r)) return SyncKind::Wait;
  if (std::holds_alternative<trace::EventSync>(r)) return SyncKind::EventSync;
  if (std::holds_alternative<trace::StreamSync>(r)) return SyncKind::StreamSync;
  if (std::holds_alternative<trace::DeviceSync>(r)) return SyncKind::DeviceSync;
  return std::nullopt;
}

void resolve_barrier_drops(const std::vector<RankRecords>& run, WhatIf& w) {
  if (!w.drop_kinds.count(SyncKind::LegacyBarrier)) return;
  for (const RankRecords& rr : run) {
    const StreamKinds kinds = stream_kinds(rr.records);
    for (const trace::Record& r : rr.records)
      if (const trace::OpCommon* op = trace::op_common(r); op && kinds.legacy(op->stream))
        w.drop.insert({rr.rank, op->seq});
  }
}

void check_what_if_targets(const std::vector<RankRecords>& run, const WhatIf& w) {
  auto rank_records = [&](int rank) -> const RankRecords& {
    for (const RankRecords& rr : run)
      if (rr.rank == rank) return rr;
    throw WhatIfError(fmt::format("the run has no rank {} (its ranks: {})", rank, [&] {
      std::string ranks;
      for (const RankRecords& rr : run) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rr.rank);
      return ranks;
    }()));
  };
  // What a drop may name, per rank: a synchronisation call, or a legacy-stream operation (its barrier).
  std::map<int, std::set<uint64_t>> droppable;
  for (const auto& [rank, seq] : w.drop) {
    const RankRecords& rr = rank_records(rank);
    auto [seqs, fresh] = droppable.try_emplace(rank);
    if (fresh) {
      const StreamKinds kinds = stream_kinds(rr.records);
      for (const trace::Record& r : rr.records)
        if (const trace::OpCommon* op = trace::op_common(r); sync_kind(r) || (op && kinds.legacy(op->stream)))
          seqs->second.insert(trace::api_seq(r));
    }
    if (!seqs->second.count(seq))
      throw WhatIfError(fmt::format("drop: rank {} has no synchronisation (or legacy-stream operation) with seq {}",
                                    rank, seq));
  }
  for (const AddedWait& a : w.add) rank_records(a.rank);  // seqs: apply_edits says which is missing
  for (const SyncKind kind : w.drop_kinds) {
    bool found = false;
    for (const RankRecords& rr : run) {
      const StreamKinds kinds = stream_kinds(rr.records);
      for (const trace::Record& r : rr.records) {
        const std::optional<SyncKind> k = sync_kind(r);
        const trace::OpCommon* op = trace::op_common(r);
        if (k == kind || (kind == SyncKind::LegacyBarrier && op && kinds.legacy(op->stream))) {
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) throw WhatIfError(fmt::format("drop kind={}: the run has no such synchronisation", to_string(kind)));
  }
}

void parse_what_if(const std::string& line, WhatIf& out) {
  const std::vector<std::string> w = words(line);
  if (w.empty()) return;
  std::map<std::string, std::string> kv;
  size_t first_key = 1;
  std::string count;  // ipg-buffers N: the one positional value
  if (w[0] == "ipg-buffers" && w.size() > 1 && w[1].find('=') == std::string::npos) {
    count = w[1];
    first_key = 2;
  }
  for (size_t i = first_key; i < w.size(); ++i) {
    const size_t eq = w[i].find('=');
    if (eq == std::string::npos || eq == 0) throw WhatIfError(fmt::format("expected key=value, found '{}'", w[i]));
    const std::string key = w[i].substr(0, eq);
    if (kv.count(key)) throw WhatIfError(fmt::format("'{}=' given twice", key));
    kv[key] = w[i].substr(eq + 1);
  }
  auto allow = [&](std::initializer_list<const char*> keys) {
    for (const auto& entry : kv) {
      const std::string& k = entry.first;
      if (std::none_of(keys.begin(), keys.end(), [&](const char* a) { return k == a; }))
        throw WhatIfError(fmt::format("'{}' does not take '{}='", w[0], k));
    }
  };
  auto need = [&](const char* key) -> const std::string& {
    auto it = kv.find(key);
    if (it == kv.end()) throw WhatIfError(fmt::format("'{}' needs '{}='", w[0], key));
    return it->second;
  };
  const std::string& verb = w[0];
  if (verb == "drop") {
    allow({"rank", "seq", "kind"});
    if (kv.count("kind")) {
      if (kv.size() != 1) throw WhatIfError("'drop kind=' takes no other key");
      const std::optional<SyncKind> kind = sync_kind_named(kv["kind"]);
      if (!kind) throw WhatIfError("kind= is one of " + sync_kind_names() + ", found '" + kv["kind"] + "'");
      out.drop_kinds.insert(*kind);
    } else {
      out.drop.insert({rank_number(need("rank")), number("seq", need("seq"))});
    }
  } else if (verb == "add-wait") {
    allow({"rank", "after", "before"});
    AddedWait a{rank_number(need("rank")), number("after", need("after")),
                number("before", need("before"))};
    if (a.after_seq >= a.before_seq)
      throw WhatIfError("add-wait: the operation after= must be issued before the one before=");
    out.add.push_back(a);
  } else if (verb == "scale") {
    allow({"stream", "kernel", "factor"});
    DurationScale s;
    s.stream = kv.count("stream") ? kv["stream"] : "";
    s.kernel = kv.count("kernel") ? kv["kernel"] : "";
    if (s.stream.empty() && s.kernel.empty()) throw WhatIfError("'scale' needs stream= or kernel=");
    s.factor = factor_of(need("factor"));
    out.scales.push_back(s);
  } else if (verb == "ipg-buffers") {
    allow({"name"});
    if (count.empty()) throw WhatIfError("'ipg-buffers' needs the number of buffers: ipg-buffers N [name=GLOB]");
    const bool digits = count.size() <= 2 && std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; });
    const uint64_t n = digits ? std::stoull(count) : 0;
    if (n < 1 || n > 64) throw WhatIfError("ipg-buffers: the number of buffers is a whole number from 1 to 64, found '" + count + "'");
    if (out.rotation) throw WhatIfError("'ipg-buffers' given twice");
    out.rotation = BufferRotation{static_cast<int>(n), kv.count("name") ? kv["name"] : ""};
    if (kv.count("name") && out.rotation->name.empty()) throw WhatIfError("ipg-buffers: name= needs a glob");
  } else if (verb == "minimal-sync") {
    allow({});
    out.minimal_sync = true;
  } else {
    throw WhatIfError("unknown what-if '" + verb + "' (known: drop, add-wait, scale, minimal-sync, ipg-buffers)");
  }
  out.lines.push_back(line);
}

std::string format_what_if(const WhatIf& w) {
  std::ostringstream out;
  for (const SyncKind k : w.drop_kinds) out << "drop kind=" << to_string(k) << "\n";
  for (const auto& [rank, seq] : w.drop) out << "drop rank=" << rank << " seq=" << seq << "\n";
  for (const AddedWait& a : w.add)
    out << "add-wait rank=" << a.rank << " after=" << a.after_seq << " before=" << a.before_seq << "\n";
  for (const DurationScale& s : w.scales) {
    out << "scale";
    if (!s.stream.empty()) out << " stream=" << quoted(s.stream);
    if (!s.kernel.empty()) out << " kernel=" << quoted(s.kernel);
    out << " factor=" << s.factor << "\n";
  }
  if (w.minimal_sync) out << "minimal-sync\n";
  if (w.rotation) {
    out << "ipg-buffers " << w.rotation->buffers;
    if (!w.rotation->name.empty()) out << " name=" << quoted(w.rotation->name);
    out << "\n";
  }
  return out.str();
}

std::vector<RankRecords> apply_edits(const std::vector<RankRecords>& run, const WhatIf& w) {
  const std::vector<RecordInserts> inserts = edit_inserts(run, w);
  std::vector<RankRecords> out;
  out.reserve(run.size());
  for (size_t ri = 0; ri < run.size(); ++ri) {
    const RankRecords& in = run[ri];
    const RecordInserts& added = inserts[ri];
    RankRecords edited;
    edited.rank = in.rank;
    edited.path = in.path;
    edited.records.reserve(in.records.size() + added.size());
    size_t next = 0;
    auto add_before = [&](size_t i) {
      for (; next < added.size() && added[next].before == i; ++next) edited.records.push_back(added[next].record);
    };
    for (size_t i = 0; i < in.records.size(); ++i) {
      const trace::Record& r = in.records[i];
      add_before(i);
      if (const std::optional<SyncKind> kind = sync_kind(r)) {
        uint64_t seq = std::visit([](const auto& x) -> uint64_t {
          if constexpr (requires { x.seq; }) return x.seq;
          else return 0;
        }, r);
        if (w.drop_kinds.count(*kind) || w.drop.count({in.rank, seq})) continue;
      }
      edited.records.push_back(r);
    }
    add_before(in.records.size());
    out.push_back(std::move(edited));
  }
  return out;
}

}  // namespace streamhaz::analysis
