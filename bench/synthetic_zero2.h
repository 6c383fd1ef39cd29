// A synthetic ZeRO-2-like trace for the benchmarks: 2 ranks (or any number), 4 streams each (input copies,
// compute, reduction, optimizer), double-buffered IPG buckets with one event per buffer, many
// steps. `racy` drops the per-buffer wait (DeepSpeed 0.10.2's one-way wait): every step then
// has IPG overwrite races.
#pragma once

#include <cstdint>
#include <string>

namespace streamhaz::bench {

inline constexpr int kZero2World = 2;

// One rank's trace of a `world`-rank job, streamed to `path`, until it holds at least `ops`
// operations. Every rank's all-reduce and all-gather are on one communicator of all ranks.
void write_synthetic_zero2_rank(const std::string& path, int rank, uint64_t ops, bool racy, int world = kZero2World);

}  // namespace streamhaz::bench
