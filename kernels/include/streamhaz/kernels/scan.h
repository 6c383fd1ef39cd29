// `streamhaz kernels scan`: libclang parses CUDA sources and writes, per __global__ function,
// which pointer parameters it reads and writes and how far (kernels.json, docs/kernels.md).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace streamhaz::kernels {

struct ScanOptions {
  std::vector<std::string> files;       // as given on the command line
  std::vector<std::string> clang_args;  // extra arguments (include paths, defines)
  bool prelude = true;                  // force-include the built-in CUDA prelude
};

// An input that cannot be scanned at all (unreadable, not parsable by clang).
class ScanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ScanResult {
  nlohmann::ordered_json document;    // the kernels.json document, keys in writing order
  std::vector<std::string> warnings;  // one line each, for standard error
};

ScanResult scan(const ScanOptions& options);

}  // namespace streamhaz::kernels
