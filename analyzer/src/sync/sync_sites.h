// The synchronisations of a run the over-synchronisation pass judges: cross-stream event
// waits and host synchronisations (event, stream, device), each with a stable key, the
// operations around it, and whether it is the host's only wait for a write to host memory.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/analysis/finding.h"
#include "model/stream_kind.h"
#include "streamhaz/analysis/replay.h"

namespace streamhaz::analysis {

// What a report says of a site: made for every site while its key is found, kept for the first
// site of each key only, which speaks for the group of that key.
struct SiteText {
  std::string what, where;
  OpRef prev_ref, next_ref;
};

struct SyncSite {
  size_t rank_index = 0;
  int rank = 0;
  uint64_t seq = 0;
  SyncKind kind = SyncKind::Wait;
  bool host = false;          // blocks the host (not a stream)
  trace::StreamId waiter = 0; // waits: the waiting stream
  std::string key;
  uint64_t prev_op = 0;       // last operation before it on the waiting (or synchronised) stream
  uint64_t next_op = 0;       // first operation after it on the waiting stream (host: on any stream)
  std::unique_ptr<SiteText> text;  // the first site of its key only (null for the others)
  // Host synchronisations: an operation it newly waits for writes host memory, which the
  // program may read afterwards (host reads are not traced).
  bool host_read = false;
};

// A deque: the sites of many ranks' judged steps number millions, and groups point at them.
using SyncSites = std::deque<SyncSite>;

// Every synchronisation site of the run, rank by rank in record order. `from_seqs` (per rank
// index): none before that seq (the judged steps' first). Only the first site of each key holds
// its text. `jobs` (AnalysisOptions::jobs): threads that scan ranks at once.
SyncSites find_sync_sites(const std::vector<RankRecords>& run, const std::vector<uint64_t>* from_seqs = nullptr,
                          unsigned jobs = 1);

// The weakest footprint tier among the operations with a footprint (API for copies and NCCL).
trace::FootprintTier weakest_tier(const std::vector<RankRecords>& run);

}  // namespace streamhaz::analysis
