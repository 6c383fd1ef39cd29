// What a rank engine reads of the analysis options: the host-timeline mode and the
// over-synchronisation pass's hooks (each field as AnalysisOptions documents it). Built once per
// check (engine_options() in analysis_parts.h), so that the engine does not depend on the
// public options and each engine holds only these.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "streamhaz/analysis/sync_site_ids.h"

namespace streamhaz::analysis {

struct EngineOptions {
  bool per_thread_host = false;
  bool local_order = false;
  bool keep_all_readers = false;
  bool phantom_run = false;  // AnalysisOptions::phantoms given: the run with phantoms is checked
  bool race_findings = true;
  const std::set<std::pair<int, uint64_t>>* skip_syncs = nullptr;
  const std::set<std::pair<int, uint64_t>>* phantom_ops = nullptr;
  const std::set<std::pair<int, uint64_t>>* lasting_phantom_ops = nullptr;
  const std::map<std::pair<int, uint64_t>, SyncSiteIds>* sync_sites = nullptr;
  const std::vector<std::tuple<int, uint64_t, uint64_t>>* order_checks = nullptr;
  std::function<void(int rank, uint64_t first_seq, uint64_t second_seq, uint64_t first_byte)> on_conflict;
  std::function<void(int rank, uint64_t first_seq, uint64_t second_seq, uint64_t first_byte,
                     std::span<const uint32_t> sites)>
      on_ordered_by_sites;
  std::function<void(int rank, uint64_t phantom_seq, std::span<const uint32_t> sites)> on_phantom_ordered_by_sites;
  std::function<void(int rank, uint64_t seq)> on_idle_query;
  bool skip_idle_queries = false;
};

}  // namespace streamhaz::analysis
