// Counts what a trace file holds, for `streamhaz inspect`.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "streamhaz/trace/records.h"

namespace streamhaz::cli {

struct StreamStats {
  std::string name;
  uint32_t device = 0;
  uint32_t flags = 0;
  int32_t priority = 0;
  std::map<std::string, uint64_t> operations;  // by kind: kernel, memcpy, nccl...
  uint64_t waits = 0;    // cudaStreamWaitEvent on this stream
  uint64_t records = 0;  // cudaEventRecord on this stream
  uint64_t syncs = 0;    // host synchronisations of this stream
};

struct TraceStats {
  std::string path;
  nlohmann::json header;
  uint64_t file_bytes = 0;
  uint64_t chunks = 0;
  uint64_t records = 0;
  bool truncated = false;
  std::string truncation;
  std::array<uint64_t, trace::kRecordKindCount> by_kind{};
  std::map<trace::StreamId, StreamStats> streams;
  uint64_t operations = 0;
  uint64_t timed_operations = 0;
  uint64_t kernels_without_footprint = 0;
  uint64_t allocations = 0;
  uint64_t allocated_bytes = 0;
  uint64_t native_frames = 0;  // frame records of native code (the rest are Python frames)
  uint64_t strings_cut = 0;    // names longer than trace::kMaxStringBytes, cut
  std::string strings_cut_note;
};

// Reads the whole file. Throws trace::TraceError on bad input.
TraceStats collect_trace_stats(const std::string& path);

std::string operation_kind(const trace::Record& r);  // "kernel", "memcpy DtoD", "ncclAllReduce"...

}  // namespace streamhaz::cli
