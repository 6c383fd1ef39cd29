// Command-line options of streamhaz-reducer and their parsing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reducer {

// How the compute stream and the reduction stream are ordered around the IPG buffers.
// Each value mirrors one period of DeepSpeed's stage_1_and_2.py (see docs/reducer.md).
enum class SyncMode { race, serialize, device, host, event };

enum class Bug { none, index_reset };

// How a gradient enters the IPG bucket: cudaMemcpyAsync (DeepSpeed's copy_ of a same-dtype
// gradient), or an elementwise kernel (its copy_ when the bucket's dtype differs), which makes
// every race on the bucket a race with a kernel on one side.
enum class BucketCopy { memcpy, kernel };

struct Options {
  int nproc = 0;  // 0: not given (one rank, or the launcher's environment decides)
  SyncMode sync = SyncMode::serialize;
  Bug bug = Bug::none;
  BucketCopy bucket_copy = BucketCopy::memcpy;
  int ipg_buffers = 2;
  std::int64_t comm_delay_us = 0;
  int steps = 10;
  int warmup = 3;
  int layers = 12;
  std::int64_t layer_elems = 8 << 20;     // fp32 gradient elements per layer
  std::int64_t bucket_elems = 24 << 20;  // IPG bucket capacity (DeepSpeed reduce_bucket_size)
  int gemm_dim = 4096;                   // m = n = k of each layer's bf16 GEMM
  bool reduce_scatter = false;
  bool expect_clean = false;
  std::string nccl_id_file;  // empty: derived from the environment (see nccl_bootstrap)
};

const char* to_string(SyncMode mode);
const char* to_string(Bug bug);
const char* to_string(BucketCopy copy);

// Parses argv (without argv[0]). Bad input prints one message to stderr and exits with 2;
// --help prints the usage and exits with 0.
Options parse_options(const std::vector<std::string>& args);

}  // namespace reducer
