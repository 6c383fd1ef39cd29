// What the analysis of one function learned about its parameters.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace streamhaz::kernels {

enum AccessBits : uint8_t { kNoAccess = 0, kRead = 1, kWrite = 2, kReadWrite = 3 };

struct ParamFacts {
  uint8_t access = kNoAccess;
  bool escaped = false;    // handed to code we cannot see, or stored in memory
  bool unbounded = false;  // some access has no extent we can state
  std::vector<nlohmann::json> extents;  // one per bounded access, in elements
};

struct FunctionFacts {
  std::vector<ParamFacts> params;
  bool complete = true;  // false: accesses the parameters do not describe may exist
  bool body_errors = false;
  std::set<std::string> notes;
};

// The extent of a parameter over all its accesses: equal extents, or the largest constant;
// null when any access is unbounded or they differ.
nlohmann::json combined_extent(const ParamFacts& p);

}  // namespace streamhaz::kernels
