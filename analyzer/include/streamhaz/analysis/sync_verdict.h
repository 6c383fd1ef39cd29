// One judged synchronisation site's verdict and costs, as the over-synchronisation pass gives it
// (docs/sync-and-replay.md, "Verdicts and findings") and the JSON report writes it.
#pragma once

#include <cstdint>
#include <string>

namespace streamhaz::analysis {

// What a synchronisation does (docs/sync-and-replay.md, "Verdicts"): orders no conflicting pair
// that nothing else orders; orders some; may order kernels without a footprint (or work past the
// judged window); is the host's wait for a copy to host memory it may read.
enum class SyncJudgement : uint8_t { Redundant, Protects, MayProtect, HostRead };
const char* to_string(SyncJudgement j);  // "redundant", "protects", "may-protect", "host-read"

// One synchronisation site's verdict (its instances folded by key: a site is judged as a whole).
struct SyncVerdict {
  std::string key;
  std::string what;        // "cudaStreamWaitEvent(compute stream, event recorded on reduction stream)"
  std::string where;       // "before memcpy DtoD (NVTX ?/step/backward)"
  SyncJudgement verdict = SyncJudgement::Redundant;
  uint64_t instances = 0;
  uint64_t pairs = 0;              // conflicting pairs only it orders (protects)
  uint64_t unfootprinted = 0;      // kernels without footprint it may protect (may-protect)
  int64_t stall_ns_per_step = 0;   // measured, slowest rank
  int64_t step_ns = 0;             // measured step time
  int64_t step_without_ns = 0;     // replay without this site (or with it replaced by minimal waits)
  bool replaced = false;           // step_without_ns is for the minimal-wait replacement
  bool finding = false;
};

}  // namespace streamhaz::analysis
