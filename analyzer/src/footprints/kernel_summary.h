// The static footprint tier: per-kernel summaries written by `streamhaz kernels scan`
// (kernels.json, docs/kernels.md), looked up by a launch's traced (mangled) kernel name and
// evaluated on the launch's raw parameter bytes into the byte ranges the launch may touch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

// An extent in elements: {"param": i}, {"const": c}, {"mul": [a, b]}, {"add": [a, b]}.
// Stored flat; children come before their parent and the root is the last node.
struct ExtentNode {
  enum class Kind : uint8_t { Param, Const, Mul, Add };
  Kind kind = Kind::Const;
  uint64_t value = 0;   // Param: the parameter index; Const: the constant
  uint32_t lhs = 0, rhs = 0;  // Mul, Add: node indices
};
struct Extent {
  std::vector<ExtentNode> nodes;
};

struct ParamSummary {
  std::string name;
  std::string type;
  std::optional<uint64_t> offset;  // in the launch's parameter buffer; none: layout unknown
  std::optional<uint64_t> size;
  bool pointer = false;
  // Pointers:
  std::optional<uint64_t> pointee_bytes;
  trace::AccessMode mode = trace::AccessMode::ReadWrite;
  bool accessed = false;          // false: "access": "none"
  std::optional<Extent> extent;   // elements from the pointer; none: unknown
  // Integers (readable by extents):
  bool integer = false;
  bool is_signed = false;
};

struct KernelSummary {
  std::string name;       // qualified, anonymous namespaces dropped
  std::string signature;  // normalised parameter types
  std::string file;
  uint32_t line = 0;
  bool templated = false;
  bool extern_c = false;
  // False when accesses may exist that the parameters do not describe (pointers inside
  // structs, pointers loaded from memory, a body with errors): see `notes`.
  bool complete = true;
  std::vector<std::string> notes;
  std::vector<ParamSummary> params;
  bool layout_known() const;  // every parameter has an offset and a size
};

// Why evaluate() gave no ranges for a launch (counted by the caller).
enum class EvaluateStatus : uint8_t { Ok, LayoutUnknown, ParamsTooShort };

// One range a launch may touch: `bytes` from `ptr`, or from `ptr` to the end of its
// allocation when the extent is unknown or saturated (nullopt).
struct KernelRange {
  uint64_t ptr = 0;
  std::optional<uint64_t> bytes;
  trace::AccessMode mode = trace::AccessMode::ReadWrite;
};

class KernelSummaries {
 public:
  // Reads kernels.json; throws trace::TraceError naming the file and the JSON path at fault.
  static KernelSummaries load(const std::string& path);
  static KernelSummaries parse(const std::string& json_text, const std::string& path_for_errors);

  // The summary for a traced kernel name (mangled as nvcc wrote it, or plain for extern "C"),
  // or nullptr when none matches or several different ones do. Cached per name; not
  // thread-safe.
  const KernelSummary* find(std::string_view traced_name) const;

  const std::vector<KernelSummary>& kernels() const { return kernels_; }
  uint64_t ambiguous_names() const { return ambiguous_; }  // distinct names with >1 match

 private:
  const KernelSummary* match(std::string_view traced_name) const;

  std::vector<KernelSummary> kernels_;
  std::unordered_multimap<std::string, size_t> by_name_;  // qualified name -> kernels_ index
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::unordered_map<std::string, const KernelSummary*, Hash, std::equal_to<>> cache_;
  mutable uint64_t ambiguous_ = 0;
};

// The value of an extent for one launch, in elements; nullopt when unknown: a parameter
// outside `param_bytes` or negative, or arithmetic past 2^64 (saturated, not wrapped).
std::optional<uint64_t> evaluate_extent(const KernelSummary& kernel, const Extent& extent,
                                        std::string_view param_bytes);

// The ranges one launch touches: one per accessed, non-null pointer parameter. Empty, with
// `status` saying why, when the layout is unknown or `param_bytes` is shorter than it.
std::vector<KernelRange> evaluate(const KernelSummary& kernel, std::string_view param_bytes,
                                  EvaluateStatus* status = nullptr);

}  // namespace streamhaz::analysis
