// Loading kernels.json and finding the summary of a traced kernel name.
#include "footprints/kernel_summary.h"

#include <nlohmann/json.hpp>

#include "streamhaz/analysis/kernel_signature.h"
#include "streamhaz/analysis/demangle.h"
#include "streamhaz/trace/input_file.h"
#include "streamhaz/trace/reader.h"

namespace streamhaz::analysis {

namespace {

using nlohmann::json;

// Walks the document keeping the JSON path of the value at hand, for errors.
struct Loader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw trace::TraceError(file, 0, path + ": " + what);
  }
  const json& member(const json& obj, const std::string& path, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("missing \"") + key + "\"");
    return *it;
  }
  std::string string(const json& obj, const std::string& path, const char* key) const {
    const json& v = member(obj, path, key);
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  bool boolean(const json& obj, const std::string& path, const char* key, bool fallback) const {
    auto it = obj.find(key);
    if (it == obj.end()) return fallback;
    if (!it->is_boolean()) fail(path + "." + key, "expected true or false");
    return it->get<bool>();
  }
  uint64_t unsigned_value(const json& v, const std::string& path) const {
    if (!v.is_number_unsigned()) fail(path, "expected a non-negative integer");
    return v.get<uint64_t>();
  }
  // A non-negative integer or null (unknown).
  std::optional<uint64_t> optional_unsigned(const json& obj, const std::string& path, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    return unsigned_value(*it, path + "." + key);
  }

  uint32_t extent_node(const json& v, const std::string& path, Extent& out, size_t param_count,
                       int depth) const {
    if (depth > 64) fail(path, "extent nests deeper than 64 levels");
    if (!v.is_object() || v.size() != 1) fail(path, "expected one of {\"param\": i}, {\"const\": c}, {\"mul\": [a, b]}, {\"add\": [a, b]}");
    const std::string& key = v.begin().key();
    const json& arg = v.begin().value();
    ExtentNode node;
    if (key == "param" || key == "const") {
      node.kind = key == "param" ? ExtentNode::Kind::Param : ExtentNode::Kind::Const;
      node.value = unsigned_value(arg, path + "." + key);
      if (node.kind == ExtentNode::Kind::Param && node.value >= param_count)
        fail(path + ".param", "parameter " + std::to_string(node.value) + " does not exist");
    } else if (key == "mul" || key == "add") {
      node.kind = key == "mul" ? ExtentNode::Kind::Mul : ExtentNode::Kind::Add;
      if (!arg.is_array() || arg.size() != 2) fail(path + "." + key, "expected an array of two extents");
      node.lhs = extent_node(arg[0], path + "." + key + "[0]", out, param_count, depth + 1);
      node.rhs = extent_node(arg[1], path + "." + key + "[1]", out, param_count, depth + 1);
    } else {
      fail(path, "unknown extent operator \"" + key + "\"");
    }
    out.nodes.push_back(node);
    return static_cast<uint32_t>(out.nodes.size() - 1);
  }

  trace::AccessMode access(const std::string& text, const std::string& path, bool& accessed) const {
    accessed = text != "none";
    if (text == "read") return trace::AccessMode::Read;
    if (text == "write") return trace::AccessMode::Write;
    if (text == "readwrite" || text == "none") return trace::AccessMode::ReadWrite;
    fail(path, "expected read, write, readwrite or none, not \"" + text + "\"");
  }

  ParamSummary param(const json& p, const std::string& path, size_t param_count) const {
    if (!p.is_object()) fail(path, "expected an object");
    ParamSummary s;
    s.name = string(p, path, "name");
    s.type = string(p, path, "type");
    s.offset = optional_unsigned(p, path, "offset");
    s.size = optional_unsigned(p, path, "size");
    s.pointer = boolean(p, path, "pointer", false);
    s.integer = boolean(p, path, "integer", false);
    s.is_signed = boolean(p, path, "signed", false);
    if (s.integer && s.size && *s.size != 1 && *s.size != 2 && *s.size != 4 && *s.size != 8)
      fail(path + ".size", "an integer parameter has 1, 2, 4 or 8 bytes");
    if (s.pointer) {
      if (s.size && *s.size != 8) fail(path + ".size", "a pointer parameter has 8 bytes");
      s.pointee_bytes = optional_unsigned(p, path, "pointee_bytes");
      s.mode = access(string(p, path, "access"), path + ".access", s.accessed);
      auto it = p.find("extent");
      if (it != p.end() && !it->is_null()) {
        Extent e;
        extent_node(*it, path + ".extent", e, param_count, 0);
        s.extent = std::move(e);
      }
    }
    return s;
  }

  KernelSummary kernel(const json& k, const std::string& path) const {
    if (!k.is_object()) fail(path, "expected an object");
    KernelSummary s;
    s.name = string(k, path, "name");
    if (s.name.empty()) fail(path + ".name", "empty");
    s.signature = normalise_types(string(k, path, "signature"));
    s.file = string(k, path, "file");
    auto line = optional_unsigned(k, path, "line");
    s.line = line && *line <= UINT32_MAX ? static_cast<uint32_t>(*line) : 0;
    s.templated = boolean(k, path, "template", false);
    s.extern_c = boolean(k, path, "extern_c", false);
    s.complete = boolean(k, path, "complete", false);  // absent: not known to be complete
    if (auto it = k.find("notes"); it != k.end()) {
      if (!it->is_array()) fail(path + ".notes", "expected an array of strings");
      for (const json& n : *it) {
        if (!n.is_string()) fail(path + ".notes", "expected an array of strings");
        s.notes.push_back(n.get<std::string>());
      }
    }
    const json& params = member(k, path, "params");
    if (!params.is_array()) fail(path + ".params", "expected an array");
    for (size_t i = 0; i < params.size(); ++i)
      s.params.push_back(param(params[i], path + ".params[" + std::to_string(i) + "]", params.size()));
    // Extents read integer parameters only.
    for (size_t i = 0; i < s.params.size(); ++i) {
      if (!s.params[i].extent) continue;
      for (const ExtentNode& n : s.params[i].extent->nodes)
        if (n.kind == ExtentNode::Kind::Param && !s.params[n.value].integer)
          fail(path + ".params[" + std::to_string(i) + "].extent",
               "parameter " + std::to_string(n.value) + " is not an integer");
    }
    return s;
  }
};

}  // namespace

bool KernelSummary::layout_known() const {
  for (const ParamSummary& p : params)
    if (!p.offset || !p.size) return false;
  return true;
}

KernelSummaries KernelSummaries::load(const std::string& path) {
  // A scan of a large code base is some MB; a file far past that is not a kernels.json.
  constexpr uint64_t kMaxKernelsFileBytes = 256ull << 20;
  return parse(trace::read_side_file(path, kMaxKernelsFileBytes), path);
}

KernelSummaries KernelSummaries::parse(const std::string& json_text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw trace::TraceError(path, e.byte > 0 ? e.byte - 1 : 0, "not valid JSON");
  }
  Loader l{path};
  if (!doc.is_object()) l.fail("$", "expected an object");
  if (l.string(doc, "$", "format") != "streamhaz-kernels")
    l.fail("$.format", "expected \"streamhaz-kernels\" (is this a kernels.json?)");
  uint64_t version = l.unsigned_value(l.member(doc, "$", "version"), "$.version");
  if (version != 1) l.fail("$.version", "version " + std::to_string(version) + " is not supported (1 is)");
  const json& kernels = l.member(doc, "$", "kernels");
  if (!kernels.is_array()) l.fail("$.kernels", "expected an array");
  KernelSummaries out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    out.kernels_.push_back(l.kernel(kernels[i], "$.kernels[" + std::to_string(i) + "]"));
    out.by_name_.emplace(out.kernels_.back().name, i);
  }
  return out;
}

const KernelSummary* KernelSummaries::find(std::string_view traced_name) const {
  if (auto it = cache_.find(traced_name); it != cache_.end()) return it->second;
  const KernelSummary* found = match(traced_name);
  cache_.emplace(std::string(traced_name), found);
  return found;
}

const KernelSummary* KernelSummaries::match(std::string_view traced_name) const {
  std::optional<std::string> demangled = demangle(traced_name);
  std::vector<const KernelSummary*> hits;
  if (!demangled) {
    // extern "C": the traced name is the plain name.
    auto [lo, hi] = by_name_.equal_range(std::string(traced_name));
    for (auto it = lo; it != hi; ++it)
      if (kernels_[it->second].extern_c) hits.push_back(&kernels_[it->second]);
  } else {
    std::optional<FunctionName> name = split_function_name(*demangled);
    if (!name) return nullptr;
    auto [lo, hi] = by_name_.equal_range(name->qualified);
    for (auto it = lo; it != hi; ++it) {
      const KernelSummary& k = kernels_[it->second];
      if (k.extern_c) continue;
      // A template's summary describes the pattern: its parameter types may name template
      // parameters, so only the count is compared (and the layout must be known to use it).
      bool same = k.templated ? name->templated && count_params(name->params) == k.params.size()
                              : !name->templated && name->params == k.signature;
      if (same) hits.push_back(&k);
    }
    // Kernels of anonymous namespaces in different files share a name: nvcc's namespace
    // name carries the file's stem.
    if (hits.size() > 1) {
      std::string stem = anonymous_namespace_stem(traced_name);
      if (!stem.empty()) {
        std::vector<const KernelSummary*> same_file;
        for (const KernelSummary* k : hits) {
          std::string base = k->file.substr(k->file.find_last_of('/') + 1);
          for (char& c : base)
            if (c == '.') c = '_';
          if (base == stem) same_file.push_back(k);
        }
        if (!same_file.empty()) hits = same_file;
      }
    }
  }
  if (hits.size() == 1) return hits.front();
  if (hits.size() > 1) ++ambiguous_;
  return nullptr;
}

}  // namespace streamhaz::analysis
