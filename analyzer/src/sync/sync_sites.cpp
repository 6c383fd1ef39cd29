#include "sync/sync_sites.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>

#include "model/footprint.h"
#include "streamhaz/analysis/kernel_name.h"
#include "streamhaz/analysis/nvtx_path.h"
#include "model/op_stamp.h"

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

StreamKinds stream_kinds(const std::vector<trace::Record>& recs) {
  StreamKinds k;
  for (const trace::Record& r : recs) {
    if (const auto* c = std::get_if<trace::StreamCreate>(&r)) k.created[c->stream] = {c->device, c->flags};
    if (const trace::OpCommon* op = trace::op_common(r))
      if (k.blocking(op->stream)) k.blocking_used.insert(k.device(op->stream));
  }
  return k;
}

std::vector<SyncSite> find_sync_sites(const std::vector<RankRecords>& run) {
  std::vector<SyncSite> sites;
  for (size_t ri = 0; ri < run.size(); ++ri) {
    const auto& recs = run[ri].records;
    const int rank = run[ri].rank;
    const StreamKinds kinds = stream_kinds(recs);
    RankNames names;
    PinnedRanges pinned;
    std::unordered_map<trace::EventId, trace::StreamId> event_stream;
    std::unordered_map<trace::StreamId, size_t> last_op;                 // record index
    std::unordered_map<trace::StreamId, std::vector<size_t>> unsynced;   // ops the host has not waited for
    std::unordered_map<trace::StreamId, std::vector<size_t>> wait_for_next;  // site indices per stream
    std::vector<size_t> host_wait_for_next;
    const size_t first_site = sites.size();
    // Streams with a capture open: a wait issued meanwhile is a dependency of the graph being
    // captured (and may be what draws its stream into the capture), not a synchronisation one
    // could remove and keep the same graph; none is judged.
    std::set<trace::StreamId> capturing;
    for (size_t i = 0; i < recs.size(); ++i) {
      const trace::Record& r = recs[i];
      if (const auto* c = std::get_if<trace::CaptureBegin>(&r)) capturing.insert(c->stream);
      if (const auto* c = std::get_if<trace::CaptureEnd>(&r)) capturing.erase(c->stream);
      if (const auto* s = std::get_if<trace::StringDef>(&r)) names.strings[s->id] = s->text;
      if (const auto* n = std::get_if<trace::StreamName>(&r)) names.stream_names[n->stream] = names.text(n->name);
      if (const auto* c = std::get_if<trace::StreamCreate>(&r)) names.device[c->stream] = c->device;
      if (const auto* a = std::get_if<trace::Alloc>(&r); a && a->kind == trace::AllocKind::HostPinned)
        pinned.ranges[a->ptr] = range_end(a->ptr, a->bytes);
      if (const auto* e = std::get_if<trace::EventRecord>(&r)) event_stream[e->event] = e->stream;
      if (const trace::OpCommon* op = trace::op_common(r)) {
        const OpRef ref = describe(r, names, rank);
        for (size_t s : wait_for_next[op->stream]) {
          sites[s].next_op = op->seq;
          sites[s].next_ref = ref;
        }
        wait_for_next[op->stream].clear();
        for (size_t s : host_wait_for_next) {
          sites[s].next_op = op->seq;
          sites[s].next_ref = ref;
        }
        host_wait_for_next.clear();
        // A legacy-stream operation's implicit barrier with the blocking streams of its device.
        if (kinds.legacy(op->stream) && kinds.blocking_used.count(kinds.device(op->stream)) && capturing.empty()) {
          SyncSite site;
          site.rank_index = ri;
          site.rank = rank;
          site.seq = op->seq;
          site.kind = SyncKind::LegacyBarrier;
          site.waiter = op->stream;
          site.next_op = op->seq;
          site.next_ref = ref;
          if (auto it = last_op.find(op->stream); it != last_op.end()) {
            site.prev_op = trace::op_common(recs[it->second])->seq;
            site.prev_ref = describe(recs[it->second], names, rank);
          }
          site.what = fmt::format("the implicit barrier of {} on the legacy default stream with the blocking streams "
                                  "of device {}",
                                  shown(ref), kinds.device(op->stream));
          site.key = fmt::format("oversync|legacy-barrier|{}|device {}|{}", names.stream(op->stream),
                                 kinds.device(op->stream), site.prev_op ? label(site.prev_ref) : "-");
          sites.push_back(std::move(site));
        }
        last_op[op->stream] = i;
        unsynced[op->stream].push_back(i);
        continue;
      }
      if (!capturing.empty()) continue;
      SyncKind kind;
      trace::StreamId waiter = 0, source = 0;
      std::vector<trace::StreamId> covered;
      std::string what, source_name;
      uint64_t seq = 0;
      bool host = false;
      if (const auto* w = std::get_if<trace::EventWait>(&r)) {
        auto it = event_stream.find(w->event);
        if (it == event_stream.end() || it->second == w->stream) continue;  // no-op or same stream
        kind = SyncKind::Wait;
        seq = w->seq;
        waiter = w->stream;
        source = it->second;
        source_name = names.stream(source);
        what = fmt::format("cudaStreamWaitEvent({}, event recorded on {})", names.stream(waiter), source_name);
      } else if (const auto* e = std::get_if<trace::EventSync>(&r)) {
        auto it = event_stream.find(e->event);
        if (it == event_stream.end()) continue;
        kind = SyncKind::EventSync;
        seq = e->seq;
        host = true;
        source = it->second;
        covered = {source};
        source_name = names.stream(source);
        what = fmt::format("cudaEventSynchronize(event recorded on {})", source_name);
      } else if (const auto* s = std::get_if<trace::StreamSync>(&r)) {
        kind = SyncKind::StreamSync;
        seq = s->seq;
        host = true;
        source = s->stream;
        covered = {source};
        source_name = names.stream(source);
        what = fmt::format("cudaStreamSynchronize({})", source_name);
      } else if (const auto* d = std::get_if<trace::DeviceSync>(&r)) {
        kind = SyncKind::DeviceSync;
        seq = d->seq;
        host = true;
        for (const auto& [s, ops] : unsynced)
          if (names.device.count(s) ? names.device[s] == d->device : d->device == 0) covered.push_back(s);
        source_name = fmt::format("device {}", d->device);
        what = fmt::format("cudaDeviceSynchronize() on device {}", d->device);
      } else {
        continue;
      }
      SyncSite site;
      site.rank_index = ri;
      site.rank = rank;
      site.seq = seq;
      site.kind = kind;
      site.host = host;
      site.waiter = waiter;
      site.what = what;
      const trace::StreamId prev_stream = host ? source : waiter;
      if (auto it = last_op.find(prev_stream); it != last_op.end() && !(host && covered.size() != 1)) {
        site.prev_op = trace::op_common(recs[it->second])->seq;
        site.prev_ref = describe(recs[it->second], names, rank);
      }
      if (host) {
        // Does it newly wait for a write to host memory? Ops since the host last waited for them.
        for (trace::StreamId s : covered) {
          for (size_t at : unsynced[s]) {
            std::vector<trace::Access> accesses;
            for (size_t j = at + 1; j < recs.size(); ++j) {
              const auto* a = std::get_if<trace::Access>(&recs[j]);
              if (!a) {
                if (std::holds_alternative<trace::Timing>(recs[j]) || std::holds_alternative<trace::StringDef>(recs[j]))
                  continue;
                break;
              }
              accesses.push_back(*a);
            }
            if (writes_host(recs[at], accesses, pinned)) site.host_read = true;
          }
          unsynced[s].clear();
        }
        host_wait_for_next.push_back(sites.size());
      } else {
        wait_for_next[waiter].push_back(sites.size());
      }
      site.key = fmt::format("oversync|{}|{}|{}|{}", to_string(kind), host ? "host" : names.stream(waiter), source_name,
                             site.prev_ref.seq ? label(site.prev_ref) : "-");
      sites.push_back(std::move(site));
    }
    for (size_t s = first_site; s < sites.size(); ++s) {
      SyncSite& site = sites[s];
      const std::string next = site.next_op ? label(site.next_ref) : "-";
      site.key += "|" + next + "|" + site.next_ref.nvtx;
      site.where = site.next_op ? fmt::format("before {}", shown(site.next_ref)) : "before the end of the trace";
      if (const std::string nvtx = nvtx_path(site.next_ref.nvtx); site.next_op && !nvtx.empty())
        site.where += fmt::format(" (NVTX {})", nvtx);
      if (site.prev_op) site.where += fmt::format(", after {}", shown(site.prev_ref));
    }
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
