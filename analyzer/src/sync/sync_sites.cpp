#include "sync/sync_sites.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "model/footprint.h"
#include "streamhaz/analysis/kernel_name.h"
#include "streamhaz/analysis/nvtx_path.h"
#include "model/op_stamp.h"
#include "sync/in_parallel.h"

namespace streamhaz::analysis {
namespace {

struct RankNames {
  std::unordered_map<trace::StringId, std::string> strings;
  std::unordered_map<trace::StreamId, std::string> stream_names;
  std::unordered_map<trace::StreamId, uint32_t> device;
  std::string stream(trace::StreamId s) const {
    auto it = stream_names.find(s);
    return it != stream_names.end() && !it->second.empty() ? it->second : fmt::format("stream {}", s);
  }
  std::string text(trace::StringId id) const {
    auto it = strings.find(id);
    return it != strings.end() ? it->second : std::string();
  }
};

OpRef describe(const trace::Record& r, const RankNames& names, int rank) {
  OpRef ref;
  ref.rank = rank;
  const trace::OpCommon* op = trace::op_common(r);
  ref.seq = op->seq;
  ref.stream = op->stream;
  ref.stream_name = names.stream(op->stream);
  ref.nvtx = names.text(op->nvtx);
  OpKind kind = OpKind::Kernel;
  uint8_t flags = 0;
  if (const auto* k = std::get_if<trace::Kernel>(&r)) ref.name = names.text(k->name);
  if (const auto* m = std::get_if<trace::Memcpy>(&r)) {
    kind = memcpy_op_kind(m->kind);
    flags = (m->flags & trace::kMemSync) ? kOpSync : 0;
  }
  if (const auto* m = std::get_if<trace::Memset>(&r)) {
    kind = OpKind::MemsetOp;
    flags = (m->flags & trace::kMemSync) ? kOpSync : 0;
  }
  if (std::holds_alternative<trace::HostFunc>(r)) kind = OpKind::HostFuncOp;
  if (const auto* n = std::get_if<trace::Nccl>(&r)) kind = nccl_op_kind(n->kind);
  ref.kind = std::holds_alternative<trace::GraphLaunch>(r) ? "graph launch" : op_kind_text(kind);
  if (ref.name.empty() && !std::holds_alternative<trace::GraphLaunch>(r)) ref.name = op_api_name(kind, flags);
  return ref;
}

// `label` names an operation in keys (the raw kernel name: keys must not move); `shown` in text.
std::string label(const OpRef& op) { return op.name.empty() || op.name == op.kind ? op.kind : op.kind + " " + op.name; }
std::string shown(const OpRef& op) {
  if (op.kind != "kernel") return label(op);
  return op.kind + " " + readable_kernel_name(op.name);
}

struct PinnedRanges {
  std::map<uint64_t, uint64_t> ranges;  // base -> end
  bool contains(uint64_t p) const {
    auto it = ranges.upper_bound(p);
    if (it == ranges.begin()) return false;
    --it;
    return p < it->second;
  }
};

bool writes_host(const trace::Record& r, const std::vector<trace::Access>& accesses, const PinnedRanges& pinned) {
  if (const auto* m = std::get_if<trace::Memcpy>(&r)) {
    if (m->kind == trace::MemcpyKind::DeviceToHost || m->kind == trace::MemcpyKind::HostToHost) return true;
    return pinned.contains(m->dst);
  }
  if (const auto* m = std::get_if<trace::Memset>(&r)) return pinned.contains(m->dst);
  for (const trace::Access& a : accesses)
    if ((uint8_t(a.mode) & uint8_t(trace::AccessMode::Write)) && pinned.contains(a.ptr)) return true;
  return false;
}

}  // namespace

namespace {

// A synchronisation call as the records give it, before it becomes a site.
struct SyncCall {
  SyncKind kind = SyncKind::Wait;
  uint64_t seq = 0;
  bool host = false;
  trace::StreamId waiter = 0, source = 0;
  std::vector<trace::StreamId> covered;  // host synchronisations: the streams waited for
  std::string what, source_name;
};

// One rank's records, read in order for its synchronisation sites: each wait and host
// synchronisation (outside stream capture), and each legacy-stream operation's implicit barrier.
class RankSiteScanner {
 public:
  // `from_seq`: no site for a synchronisation before it. The sites go to `sites`, this rank's
  // only; the first of each key within the rank has its text.
  RankSiteScanner(const RankRecords& rank, size_t rank_index, uint64_t from_seq, SyncSites& sites)
      : recs_(rank.records), rank_(rank.rank), rank_index_(rank_index), from_seq_(from_seq), sites_(sites),
        kinds_(stream_kinds(recs_)) {}

  void scan() {
    for (size_t i = 0; i < recs_.size(); ++i) {
      const trace::Record& r = recs_[i];
      note_facts(r);
      if (const trace::OpCommon* op = trace::op_common(r)) {
        on_operation(i, *op, r);
        continue;
      }
      if (!capturing_.empty()) continue;
      if (std::optional<SyncCall> call = sync_call(r)) add_sync_site(*call);
    }
    describe_places();
  }

 private:
  // What later records are read against: names, pinned host ranges, event streams, captures.
  void note_facts(const trace::Record& r) {
    if (const auto* c = std::get_if<trace::CaptureBegin>(&r)) capturing_.insert(c->stream);
    if (const auto* c = std::get_if<trace::CaptureEnd>(&r)) capturing_.erase(c->stream);
    if (const auto* s = std::get_if<trace::StringDef>(&r)) names_.strings[s->id] = s->text;
    if (const auto* n = std::get_if<trace::StreamName>(&r)) names_.stream_names[n->stream] = names_.text(n->name);
    if (const auto* c = std::get_if<trace::StreamCreate>(&r)) names_.device[c->stream] = c->device;
    if (const auto* a = std::get_if<trace::Alloc>(&r); a && a->kind == trace::AllocKind::HostPinned)
      pinned_.ranges[a->ptr] = range_end(a->ptr, a->bytes);
    if (const auto* e = std::get_if<trace::EventRecord>(&r)) event_stream_[e->event] = e->stream;
  }

  // An operation: the first after the waits that wait for it, maybe a legacy barrier itself.
  void on_operation(size_t i, const trace::OpCommon& op, const trace::Record& r) {
    // Described only where a site needs it: most operations follow no synchronisation.
    std::optional<OpRef> ref;
    auto described = [&]() -> const OpRef& {
      if (!ref) ref = describe(r, names_, rank_);
      return *ref;
    };
    if (auto waits = wait_for_next_.find(op.stream); waits != wait_for_next_.end()) {
      for (size_t s : waits->second) {
        sites_[s].next_op = op.seq;
        sites_[s].text->next_ref = described();
      }
      waits->second.clear();
    }
    for (size_t s : host_wait_for_next_) {
      sites_[s].next_op = op.seq;
      sites_[s].text->next_ref = described();
    }
    host_wait_for_next_.clear();
    if (op.seq >= from_seq_ && kinds_.legacy(op.stream) && kinds_.blocking_used.count(kinds_.device(op.stream)) &&
        capturing_.empty())
      add_legacy_barrier(op, described());
    last_op_[op.stream] = i;
    unsynced_[op.stream].push_back(i);
  }

  // A legacy-stream operation's implicit barrier with the blocking streams of its device.
  void add_legacy_barrier(const trace::OpCommon& op, const OpRef& ref) {
    SyncSite site;
    site.rank_index = rank_index_;
    site.rank = rank_;
    site.seq = op.seq;
    site.kind = SyncKind::LegacyBarrier;
    site.waiter = op.stream;
    site.next_op = op.seq;
    site.text = std::make_unique<SiteText>();
    site.text->next_ref = ref;
    if (auto it = last_op_.find(op.stream); it != last_op_.end()) {
      site.prev_op = trace::op_common(recs_[it->second])->seq;
      site.text->prev_ref = describe(recs_[it->second], names_, rank_);
    }
    site.text->what = fmt::format("the implicit barrier of {} on the legacy default stream with the blocking streams "
                            "of device {}",
                            shown(ref), kinds_.device(op.stream));
    site.key = fmt::format("oversync|legacy-barrier|{}|device {}|{}", names_.stream(op.stream),
                           kinds_.device(op.stream), site.prev_op ? label(site.text->prev_ref) : "-");
    sites_.push_back(std::move(site));
  }

  // The synchronisation `r` is, if any (a wait on an event of its own stream is none).
  std::optional<SyncCall> sync_call(const trace::Record& r) {
    SyncCall c;
    if (const auto* w = std::get_if<trace::EventWait>(&r)) {
      auto it = event_stream_.find(w->event);
      if (it == event_stream_.end() || it->second == w->stream) return std::nullopt;  // no-op or same stream
      c.kind = SyncKind::Wait;
      c.seq = w->seq;
      c.waiter = w->stream;
      c.source = it->second;
      c.source_name = names_.stream(c.source);
      c.what = fmt::format("cudaStreamWaitEvent({}, event recorded on {})", names_.stream(c.waiter), c.source_name);
    } else if (const auto* e = std::get_if<trace::EventSync>(&r)) {
      auto it = event_stream_.find(e->event);
      if (it == event_stream_.end()) return std::nullopt;
      c.kind = SyncKind::EventSync;
      c.seq = e->seq;
      c.host = true;
      c.source = it->second;
      c.covered = {c.source};
      c.source_name = names_.stream(c.source);
      c.what = fmt::format("cudaEventSynchronize(event recorded on {})", c.source_name);
    } else if (const auto* s = std::get_if<trace::StreamSync>(&r)) {
      c.kind = SyncKind::StreamSync;
      c.seq = s->seq;
      c.host = true;
      c.source = s->stream;
      c.covered = {c.source};
      c.source_name = names_.stream(c.source);
      c.what = fmt::format("cudaStreamSynchronize({})", c.source_name);
    } else if (const auto* d = std::get_if<trace::DeviceSync>(&r)) {
      c.kind = SyncKind::DeviceSync;
      c.seq = d->seq;
      c.host = true;
      for (const auto& [s, ops] : unsynced_)
        if (names_.device.count(s) ? names_.device[s] == d->device : d->device == 0) c.covered.push_back(s);
      c.source_name = fmt::format("device {}", d->device);
      c.what = fmt::format("cudaDeviceSynchronize() on device {}", d->device);
    } else {
      return std::nullopt;
    }
    return c;
  }

  void add_sync_site(const SyncCall& c) {
    if (c.seq < from_seq_) {  // before the judged steps: only what it tells of later sites
      if (c.host) newly_waits_for_host_write(c.covered);
      return;
    }
    SyncSite site;
    site.rank_index = rank_index_;
    site.rank = rank_;
    site.seq = c.seq;
    site.kind = c.kind;
    site.host = c.host;
    site.waiter = c.waiter;
    site.text = std::make_unique<SiteText>();
    site.text->what = c.what;
    const trace::StreamId prev_stream = c.host ? c.source : c.waiter;
    if (auto it = last_op_.find(prev_stream); it != last_op_.end() && !(c.host && c.covered.size() != 1)) {
      site.prev_op = trace::op_common(recs_[it->second])->seq;
      site.text->prev_ref = describe(recs_[it->second], names_, rank_);
    }
    if (c.host) {
      site.host_read = newly_waits_for_host_write(c.covered);
      host_wait_for_next_.push_back(sites_.size());
    } else {
      wait_for_next_[c.waiter].push_back(sites_.size());
    }
    site.key = fmt::format("oversync|{}|{}|{}|{}", to_string(c.kind), c.host ? "host" : names_.stream(c.waiter),
                           c.source_name, site.text->prev_ref.seq ? label(site.text->prev_ref) : "-");
    sites_.push_back(std::move(site));
  }

  // Whether an operation a host synchronisation newly waits for (one since the host last
  // waited for its stream) writes host memory; those streams count as waited for from here.
  bool newly_waits_for_host_write(const std::vector<trace::StreamId>& covered) {
    bool host_read = false;
    for (trace::StreamId s : covered) {
      for (size_t at : unsynced_[s]) {
        std::vector<trace::Access> accesses;
        for (size_t j = at + 1; j < recs_.size(); ++j) {
          const auto* a = std::get_if<trace::Access>(&recs_[j]);
          if (!a) {
            if (std::holds_alternative<trace::Timing>(recs_[j]) || std::holds_alternative<trace::StringDef>(recs_[j]))
              continue;
            break;
          }
          accesses.push_back(*a);
        }
        if (writes_host(recs_[at], accesses, pinned_)) host_read = true;
      }
      unsynced_[s].clear();
    }
    return host_read;
  }

  // Each site's place in words, and the next operation in its key. Only the first site of a key
  // in the rank keeps its text (find_sync_sites keeps the first over all ranks).
  void describe_places() {
    std::unordered_set<std::string> described;
    for (SyncSite& site : sites_) {
      SiteText& text = *site.text;
      const std::string next = site.next_op ? label(text.next_ref) : "-";
      site.key += "|" + next + "|" + text.next_ref.nvtx;
      if (!described.insert(site.key).second) {
        site.text.reset();
        continue;
      }
      text.where = site.next_op ? fmt::format("before {}", shown(text.next_ref)) : "before the end of the trace";
      if (const std::string nvtx = nvtx_path(text.next_ref.nvtx); site.next_op && !nvtx.empty())
        text.where += fmt::format(" (NVTX {})", nvtx);
      if (site.prev_op) text.where += fmt::format(", after {}", shown(text.prev_ref));
    }
  }

  const std::vector<trace::Record>& recs_;
  const int rank_;
  const size_t rank_index_;
  const uint64_t from_seq_;
  SyncSites& sites_;
  const StreamKinds kinds_;
  RankNames names_;
  PinnedRanges pinned_;
  std::unordered_map<trace::EventId, trace::StreamId> event_stream_;
  std::unordered_map<trace::StreamId, size_t> last_op_;                     // record index
  std::unordered_map<trace::StreamId, std::vector<size_t>> unsynced_;       // ops the host has not waited for
  std::unordered_map<trace::StreamId, std::vector<size_t>> wait_for_next_;  // site indices per stream
  std::vector<size_t> host_wait_for_next_;
  // Streams with a capture open: a wait issued meanwhile is a dependency of the graph being
  // captured (and may be what draws its stream into the capture), not a synchronisation one
  // could remove and keep the same graph; none is judged.
  std::set<trace::StreamId> capturing_;
};

}  // namespace

SyncSites find_sync_sites(const std::vector<RankRecords>& run, const std::vector<uint64_t>* from_seqs, unsigned jobs) {
  // Each rank on its own (on `jobs` threads), then in rank order: a key's first site over all
  // ranks keeps its text, whichever thread made it.
  std::vector<SyncSites> of_rank(run.size());
  for_each_index(run.size(), jobs, [&](size_t ri) {
    const uint64_t from = from_seqs && ri < from_seqs->size() ? (*from_seqs)[ri] : 0;
    RankSiteScanner(run[ri], ri, from, of_rank[ri]).scan();
  });
  SyncSites sites;
  std::unordered_set<std::string> described;
  for (SyncSites& part : of_rank) {
    for (SyncSite& site : part) {
      if (site.text && !described.insert(site.key).second) site.text.reset();
      sites.push_back(std::move(site));
    }
    SyncSites().swap(part);
  }
  return sites;
}

trace::FootprintTier weakest_tier(const std::vector<RankRecords>& run) {
  trace::FootprintTier t = trace::FootprintTier::Api;
  for (const RankRecords& r : run)
    for (const trace::Record& rec : r.records)
      if (const auto* a = std::get_if<trace::Access>(&rec)) t = weaker_tier(t, a->tier);
  return t;
}

}  // namespace streamhaz::analysis
