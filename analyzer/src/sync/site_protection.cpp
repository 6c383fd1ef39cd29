#include "sync/site_protection.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {
namespace {

using FirstBytes = std::map<Pair, uint64_t>;

// What one check of a variant hands over: every pair ordered only through sites, once per site
// (and group) and check, with its first conflicting byte.
struct OrderedBySite {
  SiteId site;
  Pair pair;
  uint64_t first_byte;
  bool operator<(const OrderedBySite& o) const {
    return std::tie(site, pair, first_byte) < std::tie(o.site, o.pair, o.first_byte);
  }
};

// One check of a variant by witness sets: its unordered pairs, and the pairs ordered only through
// each site. Sorted by site and pair, each site's pairs then go into its set in order; a pair
// another check of the same two operations leaves unordered (a graph launched twice) is not the
// site's: removing it would find that pair unordered already.
void witness_check(const std::vector<RankRecords>& run, const RunVariants& v, const SiteIds& ids, PairSet& base,
                   const std::function<SiteProtection&(SiteId)>& protection_of, bool real, FirstBytes& first_byte) {
  std::vector<OrderedBySite> found;
  std::vector<Pair> unordered;
  AnalysisOptions o = pass_check_options(v);
  o.skip_syncs = &v.idle_queries;
  o.sync_sites = &ids.instances;
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t) { unordered.emplace_back(rank, a, b); };
  o.on_ordered_by_sites = [&](int rank, uint64_t a, uint64_t b, uint64_t lo, std::span<const uint32_t> sites) {
    for (const SiteId s : sites) found.push_back({s, {rank, a, b}, lo});
  };
  analyze_records(run, o);
  base = PairSet(std::move(unordered));
  // Each site's pairs come out of the sort in order, each pair first with its lowest byte.
  std::sort(found.begin(), found.end());
  std::vector<std::pair<Pair, uint64_t>> bytes;  // of the pairs kept, for every site
  for (size_t i = 0; i < found.size();) {
    const SiteId site = found[i].site;
    std::vector<Pair> pairs;
    for (; i < found.size() && found[i].site == site; ++i)
      if ((pairs.empty() || pairs.back() != found[i].pair) && !base.contains(found[i].pair)) {
        pairs.push_back(found[i].pair);
        bytes.emplace_back(found[i].pair, found[i].first_byte);
      }
    if (pairs.empty()) continue;
    SiteProtection& sp = protection_of(site);
    PairSet of_site(std::move(pairs));
    if (real) sp.real.merge(of_site);
    sp.all.merge(of_site);
  }
  // First bytes once per pair: the lowest of any site.
  std::sort(bytes.begin(), bytes.end());
  for (size_t i = 0; i < bytes.size(); ++i)
    if (!i || bytes[i].first != bytes[i - 1].first) first_byte.try_emplace(bytes[i].first, bytes[i].second);
}

}  // namespace

SiteIds judged_sites(const std::vector<SyncSite>& sites) {
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

Protection protection_by_witness(const RunVariants& v, const SiteIds& ids) {
  Protection p;
  p.sites.resize(ids.keys.size());
  const std::function<SiteProtection&(SiteId)> protection_of = [&](SiteId s) -> SiteProtection& {
    return s == ids.replaceable ? p.replaceable : p.sites[s - 1];
  };
  witness_check(v.real, v, ids, p.base.real, protection_of, true, p.first_byte);
  for (const auto& variant : v.touch)
    witness_check(variant, v, ids, p.base.touch.emplace_back(), protection_of, false, p.first_byte);
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
    PairSet real = unordered_pairs(v.real, v, &p.first_byte, &skip).minus(p.base.real);
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
      all.merge(unordered_pairs(v.touch[i], v, &p.first_byte, &skip).minus(p.base.touch[i]));
    p.sites[lo].real = std::move(real);
    p.sites[lo].all = std::move(all);
  };
  judge(0, ids.keys.size());
  // The group: every replaceable site removed at once.
  std::set<std::pair<int, uint64_t>> group;
  for (const auto& [instance, site] : ids.instances)
    if (site.group) group.insert(instance);
  const auto skip = v.left_out(group);
  p.replaceable.real = unordered_pairs(v.real, v, &p.first_byte, &skip).minus(p.base.real);
  p.replaceable.all = p.replaceable.real;
  for (size_t i = 0; i < v.touch.size() && i < p.base.touch.size(); ++i)
    p.replaceable.all.merge(unordered_pairs(v.touch[i], v, &p.first_byte, &skip).minus(p.base.touch[i]));
  return p;
}

PairSet ordered_only_through_other_ranks(const RunVariants& v, const VariantPairs& local_base) {
  if (v.real.size() < 2) return {};
  // Only pairs the ranks' own order leaves unordered can be ordered through other ranks: one
  // order-only check of them with the order collectives carry.
  PairSet local = local_base.real;
  for (const PairSet& t : local_base.touch) local.merge(t);
  return local.minus(unordered_after(v, WhatIf{}, local, PassOrder::Global));
}

}  // namespace streamhaz::analysis
