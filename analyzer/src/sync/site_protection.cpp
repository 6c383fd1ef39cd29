#include "sync/site_protection.h"

#include <algorithm>
#include <functional>
#include <set>

#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {
namespace {

using Pair = std::tuple<int, uint64_t, uint64_t>;
using FirstBytes = std::map<Pair, uint64_t>;

// One check of a variant by witness sets: its unordered pairs, and for every site the pairs
// ordered only through it (some of which other checks of the same operations leave unordered:
// those are not the site's, as removing it would find them unordered already).
void witness_check(const std::vector<RankRecords>& run, const SiteIds& ids,
                   const std::set<std::pair<int, uint64_t>>& idle_queries, PairSet& base,
                   std::vector<std::vector<Pair>>& ordered_by, FirstBytes& first_byte) {
  AnalysisOptions o = pass_check_options();
  o.skip_syncs = &idle_queries;
  o.sync_sites = &ids.instances;
  o.on_conflict = [&](int rank, uint64_t a, uint64_t b, uint64_t) { base.insert({rank, a, b}); };
  o.on_ordered_by_sites = [&](int rank, uint64_t a, uint64_t b, uint64_t lo, std::span<const uint32_t> sites) {
    for (const SiteId s : sites) ordered_by[s - 1].emplace_back(rank, a, b);
    first_byte.try_emplace({rank, a, b}, lo);
  };
  analyze_records(run, o);
}

void keep_new(std::vector<Pair>& pairs, const PairSet& base, PairSet& into) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  for (const Pair& p : pairs)
    if (!base.count(p)) into.insert(p);
  pairs.clear();
  pairs.shrink_to_fit();
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
    ids.instances[{s.rank, s.seq}] = it->second;
  }
  return ids;
}

Protection protection_by_witness(const RunVariants& v, const SiteIds& ids) {
  Protection p;
  p.sites.resize(ids.keys.size());
  std::vector<std::vector<Pair>> ordered_by(ids.keys.size());
  witness_check(v.real, ids, v.idle_queries, p.base.real, ordered_by, p.first_byte);
  for (size_t s = 0; s < ids.keys.size(); ++s) {
    keep_new(ordered_by[s], p.base.real, p.sites[s].real);
    p.sites[s].all = p.sites[s].real;
  }
  for (const auto& variant : v.touch) {
    PairSet& base = p.base.touch.emplace_back();
    witness_check(variant, ids, v.idle_queries, base, ordered_by, p.first_byte);
    for (size_t s = 0; s < ids.keys.size(); ++s) keep_new(ordered_by[s], base, p.sites[s].all);
  }
  return p;
}

Protection protection_by_removal(const RunVariants& v, const SiteIds& ids) {
  Protection p;
  p.sites.resize(ids.keys.size());
  p.base = variant_pairs(v, nullptr);
  auto instances_of = [&](size_t lo, size_t hi) {
    std::set<std::pair<int, uint64_t>> drop;
    for (const auto& [instance, site] : ids.instances)
      if (site - 1 >= lo && site - 1 < hi) drop.insert(instance);
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
    PairSet real = new_pairs(unordered_pairs(v.real, &p.first_byte, &skip), p.base.real);
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
    for (size_t i = 0; i < v.touch.size() && i < p.base.touch.size(); ++i) {
      const PairSet now = new_pairs(unordered_pairs(v.touch[i], &p.first_byte, &skip), p.base.touch[i]);
      all.insert(now.begin(), now.end());
    }
    p.sites[lo].real = std::move(real);
    p.sites[lo].all = std::move(all);
  };
  judge(0, ids.keys.size());
  return p;
}

PairSet ordered_only_through_other_ranks(const RunVariants& v, const VariantPairs& local_base) {
  PairSet out;
  if (v.real.size() < 2) return out;
  auto add = [&](const std::vector<RankRecords>& run, const PairSet& local) {
    const PairSet global = unordered_pairs(run, nullptr, &v.idle_queries, PassOrder::Global);
    for (const auto& pair : local)
      if (!global.count(pair)) out.insert(pair);
  };
  add(v.real, local_base.real);
  for (size_t i = 0; i < v.touch.size() && i < local_base.touch.size(); ++i) add(v.touch[i], local_base.touch[i]);
  return out;
}

}  // namespace streamhaz::analysis
