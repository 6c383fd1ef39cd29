#include "streamhaz/report/sarif_report.h"

#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "streamhaz/report/stack_text.h"

namespace streamhaz::report {
namespace {

using analysis::Finding;
using analysis::FindingKind;
using analysis::OpRef;
using json = nlohmann::ordered_json;

constexpr const char* kSarifSchemaUri =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
constexpr const char* kFingerprintName = "streamhazFindingKey/v1";

struct RuleInfo {
  FindingKind kind;
  const char* name;
  const char* level;  // races corrupt data: error; over-synchronisation costs time: warning
  const char* short_text;
  const char* full_text;
};

constexpr RuleInfo kRules[] = {
    {FindingKind::Race, "StreamRace", "error",
     "Unordered accesses to the same device bytes on different CUDA streams",
     "Two operations on different CUDA streams (or ranks) touch overlapping bytes, at least one of them "
     "writes, and no event wait, synchronisation or NCCL ordering makes one happen before the other. The "
     "result depends on timing: runs can silently differ."},
    {FindingKind::OverSync, "OverSynchronisation", "warning",
     "A wait or synchronisation that protects no conflicting pair",
     "A stream wait, event or device synchronisation orders operations that never touch the same bytes. "
     "It costs overlap (step time) without preventing any race."},
    {FindingKind::PossibleRace, "PossibleStreamRace", "warning",
     "A kernel given a pointer into bytes another stream accesses, unordered",
     "A kernel received a launch argument pointing into bytes that an operation on another CUDA stream writes "
     "(or that another kernel also received), and nothing orders the two. Which bytes the kernel touches is "
     "unknown (pointer footprint tier): an exact trace or a kernel summary confirms or clears it."},
};

size_t rule_index(FindingKind kind) {
  for (size_t i = 0; i < std::size(kRules); ++i)
    if (kRules[i].kind == kind) return i;
  return 0;
}

json rules_json() {
  json rules = json::array();
  for (const RuleInfo& r : kRules)
    rules.push_back({{"id", kind_id(r.kind)},
                     {"name", r.name},
                     {"shortDescription", {{"text", r.short_text}}},
                     {"fullDescription", {{"text", r.full_text}}},
                     {"help", {{"text", std::string(r.full_text) + " See docs/check.md."}}},
                     {"defaultConfiguration", {{"level", r.level}}},
                     {"properties", {{"tags", {"cuda", "concurrency"}}}}});
  return rules;
}

// A file path as a URI reference: relative paths stay relative (resolved against the checkout
// by code-scanning services), absolute ones become file:// URIs; unsafe bytes are %-encoded.
std::string path_to_uri(const std::string& path) {
  std::string out = path.starts_with('/') ? "file://" : "";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("-._~/!$&'()*+,;=:@").find(static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string stream_text(const OpRef& op) {
  if (op.on_host) return "the host (no stream)";
  return op.stream_name.empty() ? fmt::format("stream {}", op.stream) : op.stream_name;
}

std::string op_text(const OpRef& op) {
  std::string what = op.name.empty() || op.name == op.kind ? op.kind : op.kind + " " + op.name;
  std::string text = fmt::format("{} ({}) on {}, rank {}", what, trace::to_string(op.role), stream_text(op), op.rank);
  if (const std::string nvtx = nvtx_path(op.nvtx); !nvtx.empty()) text += ", NVTX " + nvtx;
  if (const analysis::StackFrame* f = innermost_user_frame(op.stack)) text += ", at " + frame_text(*f);
  return text;
}

std::string message_text(const Finding& f) {
  std::string text = fmt::format("{}: {} is not ordered after {}. Buffer {} bytes [{}, {}).", f.title,
                                 op_text(f.second), op_text(f.first), f.buffer.name, f.buffer.offset,
                                 f.buffer.offset + f.buffer.bytes);
  if (!f.missing_order.empty()) text += " Missing order: " + f.missing_order + ".";
  if (f.occurrences > 1) text += fmt::format(" Seen {} times.", f.occurrences);
  text += fmt::format(" Footprint: {} tier, {} byte ranges.", trace::to_string(f.tier), f.exact ? "exact" : "approximate");
  if (!f.detail.empty()) text += " " + f.detail;
  return text;
}

class SarifBuilder {
 public:
  explicit SarifBuilder(const ReportInput& input) : input_(input) {
    for (const auto& t : input.analysis.traces) {
      if (!rank_artifact_.count(t.rank)) rank_artifact_[t.rank] = artifacts_.size();
      artifacts_.push_back({{"location", {{"uri", path_to_uri(t.path)}}},
                            {"roles", {"analysisTarget"}},
                            {"description", {{"text", fmt::format("streamhaz trace of rank {}", t.rank)}}}});
    }
  }

  // The stacks of a finding, each with what it is the stack of.
  std::vector<std::pair<std::string, const analysis::Stack*>> stacks_of(const Finding& f) const {
    std::vector<std::pair<std::string, const analysis::Stack*>> out;
    auto add = [&](std::string what, const analysis::Stack& s) {
      if (!s.empty()) out.emplace_back(std::move(what), &s);
    };
    if (f.kind == FindingKind::OverSync) {
      add("the synchronisation", f.sync_stack);
      add("the operation before it: " + op_text(f.first), f.first.stack);
      add("the operation after it: " + op_text(f.second), f.second.stack);
    } else {
      add("the later operation: " + op_text(f.second), f.second.stack);
      add("the earlier operation: " + op_text(f.first), f.first.stack);
      add("the allocation of the tensor holding " + f.buffer.name + " (PyTorch's allocator history)", f.buffer.tensor_stack);
      add((f.buffer.caching_allocator ? "the caching-allocator segment holding " : "the allocation of ") + f.buffer.name,
          f.buffer.alloc_stack);
    }
    return out;
  }

  json frame_location(const analysis::StackFrame& f) const {
    json loc = {{"message", {{"text", frame_text(f)}}}};
    if (!f.file.empty()) {
      json physical = {{"artifactLocation", {{"uri", source_uri(f.file)}}}};
      if (f.line) physical["region"] = {{"startLine", f.line}};
      loc["physicalLocation"] = std::move(physical);
    }
    if (!f.function.empty()) loc["logicalLocations"] = {{{"name", f.function}, {"kind", "function"}}};
    return loc;
  }

  json stack_json(const std::string& what, const analysis::Stack& stack) const {
    json frames = json::array();
    for (const analysis::StackFrame& f : stack) {
      json frame = {{"location", frame_location(f)}};
      if (f.kind == trace::FrameKind::Native && !f.module.empty()) frame["module"] = f.module;
      frames.push_back(std::move(frame));
    }
    return {{"message", {{"text", "Call stack of " + what}}}, {"frames", std::move(frames)}};
  }

  // One thread flow per stack, outermost call first (the order it executed in).
  json code_flow(const std::vector<std::pair<std::string, const analysis::Stack*>>& stacks) const {
    json flows = json::array();
    for (const auto& [what, stack] : stacks) {
      json locations = json::array();
      for (auto f = stack->rbegin(); f != stack->rend(); ++f) locations.push_back({{"location", frame_location(*f)}});
      flows.push_back({{"message", {{"text", what}}}, {"locations", std::move(locations)}});
    }
    return {{{"threadFlows", std::move(flows)}}};
  }

  json result(const Finding& f, const SuppressedFinding* suppressed) const {
    const size_t rule = rule_index(f.kind);
    json r = {{"ruleId", kind_id(f.kind)},
              {"ruleIndex", rule},
              {"level", kRules[rule].level},
              {"message", {{"text", message_text(f)}}},
              {"locations", {location(f.second, 0, "not ordered after the related operation")}},
              {"relatedLocations", {location(f.first, 1, "issued first, on " + stream_text(f.first))}},
              {"partialFingerprints", {{kFingerprintName, f.key}}},
              {"occurrenceCount", std::max<uint64_t>(f.occurrences, 1)},
              {"properties",
               {{"buffer", f.buffer.name},
                {"offset", f.buffer.offset},
                {"bytes", f.buffer.bytes},
                {"allocationBase", fmt::format("{:#x}", f.buffer.alloc_base)},
                {"ranks", f.ranks},
                {"footprintTier", trace::to_string(f.tier)},
                {"exactRanges", f.exact},
                {"missingOrder", f.missing_order}}}};
    if (const auto stacks = stacks_of(f); !stacks.empty()) {
      json list = json::array();
      for (const auto& [what, stack] : stacks) list.push_back(stack_json(what, *stack));
      r["stacks"] = std::move(list);
      r["codeFlows"] = code_flow(stacks);
    }
    if (suppressed) {
      const RuleOrigin& o = suppressed->rule;
      r["suppressions"] = {{{"kind", "external"},
                            {"justification", fmt::format("{}:{}: {}", o.file, o.line, o.text)}}};
    }
    return r;
  }

  json log() const {
    json results = json::array();
    for (const Finding& f : input_.analysis.findings) results.push_back(result(f, nullptr));
    for (const SuppressedFinding& s : input_.suppressed) results.push_back(result(s.finding, &s));
    json notifications = json::array();
    for (const std::string& w : input_.analysis.warnings)
      notifications.push_back({{"level", "warning"}, {"message", {{"text", w}}}});
    json run = {{"tool",
                 {{"driver",
                   {{"name", "streamhaz"},
                    {"version", input_.tool_version},
                    {"semanticVersion", input_.tool_version},
                    {"rules", rules_json()}}}}},
                {"invocations",
                 {{{"executionSuccessful", true}, {"toolExecutionNotifications", std::move(notifications)}}}},
                {"artifacts", artifacts_},
                {"results", std::move(results)},
                {"properties", {{"operationsChecked", input_.analysis.operations_checked}}}};
    return {{"$schema", kSarifSchemaUri}, {"version", "2.1.0"}, {"runs", {std::move(run)}}};
  }

 private:
  // The operation as a logical location (the kernel or NCCL call on its stream and rank) in
  // the trace file of its rank as the physical artifact.
  json location(const OpRef& op, int id, const std::string& note) const {
    std::string name = op.name.empty() ? op.kind : op.name;
    json loc = {{"id", id},
                {"message", {{"text", op_text(op) + ": " + note}}},
                {"logicalLocations",
                 {{{"name", name},
                   {"fullyQualifiedName", fmt::format("rank {}/{}/{}", op.rank, stream_text(op), name)},
                   {"kind", "function"}}}}};
    // The program line that issued it, where the trace has its stack: what code scanning shows.
    const analysis::StackFrame* frame = innermost_user_frame(op.stack);
    if (frame && !frame->file.empty()) {
      loc["physicalLocation"] = {{"artifactLocation", {{"uri", source_uri(frame->file)}}}};
      if (frame->line) loc["physicalLocation"]["region"] = {{"startLine", frame->line}};
      return loc;
    }
    auto artifact = rank_artifact_.find(op.rank);
    if (artifact != rank_artifact_.end())
      loc["physicalLocation"] = {{"artifactLocation",
                                  {{"uri", artifacts_[artifact->second]["location"]["uri"]}, {"index", artifact->second}}}};
    return loc;
  }

  std::string source_uri(const std::string& file) const {
    const std::string& root = input_.source_root;
    if (!root.empty()) {
      const std::string prefix = root.ends_with('/') ? root : root + "/";
      if (file.starts_with(prefix)) return path_to_uri(file.substr(prefix.size()));
    }
    return path_to_uri(file);
  }

  const ReportInput& input_;
  json artifacts_ = json::array();
  std::map<int, size_t> rank_artifact_;
};

}  // namespace

json sarif_report(const ReportInput& input) { return SarifBuilder(input).log(); }

void write_sarif_report(std::ostream& out, const ReportInput& input) {
  out << sarif_report(input).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace streamhaz::report
