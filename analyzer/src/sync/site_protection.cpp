#include "sync/site_protection.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "streamhaz/analysis/replay.h"
#include "sync/by_rank.h"

namespace streamhaz::analysis {
namespace {

using FirstBytes = std::map<Pair, uint64_t>;
using Ops = std::set<std::pair<int, uint64_t>>;
// The same as an array: a check of many ranks meets millions of pairs, searched here.
using SortedOps = std::vector<std::pair<int, uint64_t>>;

bool holds(const SortedOps& ops, int rank, uint64_t op) {
  return std::binary_search(ops.begin(), ops.end(), std::pair<int, uint64_t>{rank, op});
}

// The operations of `pairs` (either side) that are in `unfootprinted`, added to `out` in order.
void add_unfootprinted(const PairSet& pairs, const SortedOps& unfootprinted, Ops& out) {
  SortedOps found;
  for (const auto& [rank, a, b] : pairs)
    for (uint64_t op : {a, b})
      if (holds(unfootprinted, rank, op)) found.emplace_back(rank, op);
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  for (const auto& op : found) out.emplace_hint(out.end(), op);
}
void add_unfootprinted(const PairSet& pairs, const Ops& unfootprinted, Ops& out) {
  add_unfootprinted(pairs, SortedOps(unfootprinted.begin(), unfootprinted.end()), out);
}

// What one check of a variant hands over: each pair ordered only through sites, once per report
// (an access of the later operation), with its first conflicting byte and the sites, which sit
// in one pool: a report names a few sites, and the sort moves one entry per report.
struct OrderedReport {
  Pair pair;
  uint64_t first_byte;
  uint32_t sites_begin, sites_count;  // in the pool
  bool operator<(const OrderedReport& o) const {
    if (pair != o.pair) return pair < o.pair;
    return first_byte < o.first_byte;
  }
};

// The pairs of `pairs` with neither operation in `ops`.
PairSet without_ops(const PairSet& pairs, const SortedOps& ops) {
  std::vector<Pair> out;
  for (const auto& p : pairs) {
    const auto& [rank, a, b] = p;
    if (!holds(ops, rank, a) && !holds(ops, rank, b)) out.push_back(p);
  }
  return PairSet(std::move(out));
}

// One check of a variant by witness sets: its unordered pairs, and the pairs ordered only through
// each site. One sort by pair: each pair's lowest byte comes first, and each site's pairs are
// appended in order. A pair another check of the same two operations leaves unordered (a graph
// launched twice) is not the site's: removing it would find that pair unordered already.
// `phantoms`: the variant is the run with phantoms with these fences; null: the run as traced.
// `idle_found`: the idle queries are not known yet; the check leaves them out as it meets them,
// and names them here (their clocks are the same in every variant).
// `real_base` (a variant whose only phantoms are fences, one_check_serves_both): the check stands
// for the run's own as well; its pairs without a fence are the run's, into `real_base` and each
// site's `real`.
void witness_check(const std::vector<PhantomFences>* phantoms, const RunVariants& v, const SiteIds& ids,
                   PairSet& base, const std::function<SiteProtection&(SiteId)>& protection_of, FirstBytes& first_byte,
                   std::set<std::pair<int, uint64_t>>* idle_found = nullptr, PairSet* real_base = nullptr) {
  const bool real = !phantoms;
  const SortedOps fences = real_base ? SortedOps(v.fences.begin(), v.fences.end()) : SortedOps{};
  // By rank (the check's ranks run on several threads): each rank's reports name sites in its
  // own pool.
  ByRank<OrderedReport> found_by_rank(v.real());
  ByRank<SiteId> pool_by_rank(v.real());
  ByRank<Pair> unordered(v.real());
  ByRank<std::pair<int, uint64_t>> idle(v.real());
  AnalysisOptions o = pass_check_options(v);
  if (idle_found) {
    o.skip_idle_queries = true;
    o.on_idle_query = [&](int rank, uint64_t seq) { idle.of(rank).emplace_back(rank, seq); };
  } else {
    o.skip_syncs = &v.idle_queries;
  }
  o.sync_sites = &ids.instances;
  o.phantoms = phantoms;
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t) { unordered.of(rank).emplace_back(rank, a, b); };
  o.on_ordered_by_sites = [&](int rank, uint64_t a, uint64_t b, uint64_t lo, std::span<const uint32_t> sites) {
    std::vector<SiteId>& pool = pool_by_rank.of(rank);
    found_by_rank.of(rank).push_back(
        {{rank, a, b}, lo, static_cast<uint32_t>(pool.size()), static_cast<uint32_t>(sites.size())});
    pool.insert(pool.end(), sites.begin(), sites.end());
  };
  // Earlier phantoms a later one of their timeline stands for: no pair, but a kernel the site orders.
  // Neither side of their pairs is in a graph, so no other check of the pair leaves it unordered.
  ByRank<std::pair<SiteId, std::pair<int, uint64_t>>> passed_over(v.real());
  o.on_phantom_ordered_by_sites = [&](int rank, uint64_t phantom, std::span<const uint32_t> sites) {
    for (SiteId site : sites) passed_over.of(rank).push_back({site, {rank, phantom}});
  };
  analyze_records(v.real(), o);
  if (idle_found)
    for (const auto& part : idle.parts()) idle_found->insert(part.begin(), part.end());
  // One pool: each rank's reports move their sites past the ranks before it.
  std::vector<SiteId> pool;
  std::vector<OrderedReport> found;
  size_t reports = 0, sites_named = 0;
  for (size_t i = 0; i < found_by_rank.parts().size(); ++i) {
    reports += found_by_rank.parts()[i].size();
    sites_named += pool_by_rank.parts()[i].size();
  }
  found.reserve(reports);
  pool.reserve(sites_named);
  for (size_t i = 0; i < found_by_rank.parts().size(); ++i) {
    const uint32_t offset = static_cast<uint32_t>(pool.size());
    std::vector<SiteId>& sites = pool_by_rank.parts()[i];
    pool.insert(pool.end(), sites.begin(), sites.end());
    sites = {};
    for (OrderedReport& r : found_by_rank.parts()[i]) {
      r.sites_begin += offset;
      found.push_back(r);
    }
    found_by_rank.parts()[i] = {};
  }
  base = PairSet(unordered.joined());
  if (real_base) *real_base = without_ops(base, fences);
  std::sort(found.begin(), found.end());
  std::vector<std::vector<Pair>> of_site(ids.replaceable + 1);  // by site id; the group's is last
  // The pairs come in order: `base` and `first_byte` are walked along, not searched.
  auto walk = first_byte.begin();
  const std::vector<Pair>& base_pairs = base.sorted();
  auto base_at = base_pairs.begin();
  for (size_t i = 0; i < found.size();) {
    const Pair& pair = found[i].pair;
    size_t end = i;
    while (end < found.size() && found[end].pair == pair) ++end;
    while (base_at != base_pairs.end() && *base_at < pair) ++base_at;
    if (base_at == base_pairs.end() || *base_at != pair) {
      // First bytes once per pair: the lowest of any report (the first of the pair's run).
      while (walk != first_byte.end() && walk->first < pair) ++walk;
      if (walk == first_byte.end() || walk->first != pair) walk = first_byte.emplace_hint(walk, pair, found[i].first_byte);
      for (size_t k = i; k < end; ++k)
        for (uint32_t j = 0; j < found[k].sites_count; ++j) {
          std::vector<Pair>& pairs = of_site[pool[found[k].sites_begin + j]];
          if (pairs.empty() || pairs.back() != pair) pairs.push_back(pair);
        }
    }
    i = end;
  }
  const SortedOps unfootprinted(v.unfootprinted.begin(), v.unfootprinted.end());
  for (SiteId site = 1; site < of_site.size(); ++site) {
    if (of_site[site].empty()) continue;
    SiteProtection& sp = protection_of(site);
    PairSet pairs(std::move(of_site[site]));
    add_unfootprinted(pairs, unfootprinted, sp.unfootprinted);
    if (real) sp.real.merge(pairs);
    else if (real_base) sp.real.merge(without_ops(pairs, fences));
    sp.all.merge(pairs);
  }
  for (const auto& part : passed_over.parts())
    for (const auto& [site, phantom] : part) protection_of(site).unfootprinted.insert(phantom);
}

}  // namespace

SiteIds judged_sites(const SyncSites& sites) {
  SiteIds ids;
  std::set<std::string> host_read;
  for (const SyncSite& s : sites)
    if (s.host && s.host_read) host_read.insert(s.key);
  std::map<std::string, SiteId> of_key;
  for (const SyncSite& s : sites) {
    if (host_read.count(s.key)) continue;
    auto [it, fresh] = of_key.try_emplace(s.key, static_cast<SiteId>(ids.keys.size() + 1));
    if (fresh) ids.keys.push_back(s.key);
    ids.instances[{s.rank, s.seq}] = SyncSiteIds{it->second, s.kind == SyncKind::LegacyBarrier ? 0u : 1u};
  }
  ids.replaceable = static_cast<SiteId>(ids.keys.size() + 1);
  for (auto& [instance, site] : ids.instances)
    if (site.group) site.group = ids.replaceable;
  return ids;
}

bool one_check_serves_both(const RunVariants& v) {
  if (v.touch.size() != 1) return false;
  for (const auto& op : v.unfootprinted)
    if (!v.fences.count(op)) return false;
  for (const RankRecords& rr : v.real())
    for (const trace::Record& r : rr.records) {
      if (const auto* q = std::get_if<trace::EventQuery>(&r); q && q->complete) return false;
      if (const auto* q = std::get_if<trace::StreamQuery>(&r); q && q->complete) return false;
    }
  return true;
}

Protection protection_by_witness(RunVariants& v, const SiteIds& ids, WitnessChecks checks) {
  Protection p;
  p.sites.resize(ids.keys.size());
  const std::function<SiteProtection&(SiteId)> protection_of = [&](SiteId s) -> SiteProtection& {
    return s == ids.replaceable ? p.replaceable : p.sites[s - 1];
  };
  if (checks == WitnessChecks::Fewest && one_check_serves_both(v)) {
    v.idle_queries_found = true;  // no query completed: none is idle
    witness_check(&v.touch.front(), v, ids, p.base.touch.emplace_back(), protection_of, p.first_byte, nullptr,
                  &p.base.real);
    return p;
  }
  witness_check(nullptr, v, ids, p.base.real, protection_of, p.first_byte,
                v.idle_queries_found ? nullptr : &v.idle_queries);
  v.idle_queries_found = true;
  for (const auto& phantoms : v.touch)
    witness_check(&phantoms, v, ids, p.base.touch.emplace_back(), protection_of, p.first_byte);
  return p;
}

Protection protection_by_removal(const RunVariants& v, const SiteIds& ids) {
  Protection p;
  p.sites.resize(ids.keys.size());
  p.base = variant_pairs(v, nullptr);
  auto instances_of = [&](size_t lo, size_t hi) {
    std::set<std::pair<int, uint64_t>> drop;
    for (const auto& [instance, site] : ids.instances)
      if (site.site - 1 >= lo && site.site - 1 < hi) drop.insert(instance);
    return drop;
  };
  // Group testing: removing a set of sites that orders nothing new (in any variant) clears
  // every member at once, since removing fewer removes fewer edges; a set that does is split
  // until single sites are judged, each with every pair it orders.
  std::function<void(size_t, size_t)> judge = [&](size_t lo, size_t hi) {
    if (lo >= hi) return;
    const auto drop = instances_of(lo, hi);
    const auto skip = v.left_out(drop);
    // Pairs with known footprints first: a set that orders some is split without the rest.
    PairSet real = unordered_pairs(v.real(), v, &p.first_byte, &skip).minus(p.base.real);
    if (!real.empty() && hi - lo > 1) {
      judge(lo, lo + (hi - lo) / 2);
      judge(lo + (hi - lo) / 2, hi);
      return;
    }
    PairSet all = real;
    if (hi - lo > 1) {
      add_new_touch_pairs(v, p.base, drop, all, true);
      if (all.empty()) return;
      judge(lo, lo + (hi - lo) / 2);
      judge(lo + (hi - lo) / 2, hi);
      return;
    }
    for (size_t i = 0; i < v.touch.size() && i < p.base.touch.size(); ++i)
      all.merge(
          unordered_pairs(v.real(), v, &p.first_byte, &skip, PassOrder::Local, nullptr, &v.touch[i]).minus(p.base.touch[i]));
    p.sites[lo].real = std::move(real);
    p.sites[lo].all = std::move(all);
    add_unfootprinted(p.sites[lo].all, v.unfootprinted, p.sites[lo].unfootprinted);
  };
  judge(0, ids.keys.size());
  // The group: every replaceable site removed at once.
  std::set<std::pair<int, uint64_t>> group;
  for (const auto& [instance, site] : ids.instances)
    if (site.group) group.insert(instance);
  const auto skip = v.left_out(group);
  p.replaceable.real = unordered_pairs(v.real(), v, &p.first_byte, &skip).minus(p.base.real);
  p.replaceable.all = p.replaceable.real;
  for (size_t i = 0; i < v.touch.size() && i < p.base.touch.size(); ++i)
    p.replaceable.all.merge(
        unordered_pairs(v.real(), v, &p.first_byte, &skip, PassOrder::Local, nullptr, &v.touch[i]).minus(p.base.touch[i]));
  add_unfootprinted(p.replaceable.all, v.unfootprinted, p.replaceable.unfootprinted);
  return p;
}

PairSet ordered_only_through_other_ranks(const RunVariants& v, const VariantPairs& local_base) {
  if (v.real().size() < 2) return {};
  // Only pairs the ranks' own order leaves unordered can be ordered through other ranks: one
  // order-only check of them with the order collectives carry.
  PairSet local = local_base.real;
  for (const PairSet& t : local_base.touch) local.merge(t);
  return local.minus(unordered_after(v, WhatIf{}, local, PassOrder::Global));
}

}  // namespace streamhaz::analysis
