#include "streamhaz/report/json_report.h"

#include <fmt/format.h>

#include "streamhaz/report/stack_text.h"

namespace streamhaz::report {
namespace {

using analysis::Finding;
using analysis::OpRef;
using json = nlohmann::ordered_json;

// Addresses as hex strings: JSON numbers above 2^53 lose precision in many readers.
std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

// Frames innermost first; native frames also carry their module and offset.
json stack_json(const analysis::Stack& stack) {
  json frames = json::array();
  for (const analysis::StackFrame& f : stack) {
    json frame = {{"kind", trace::to_string(f.kind)}, {"file", f.file}, {"line", f.line}, {"function", f.function}};
    if (f.kind == trace::FrameKind::Native) {
      frame["module"] = f.module;
      frame["offset"] = hex(f.offset);
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

json origin_json(const analysis::StreamOrigin& o) {
  if (o.kind == analysis::StreamOriginKind::None) return nullptr;
  json j{{"how", o.kind == analysis::StreamOriginKind::Created ? "created" : "first_used"}, {"stack", stack_json(o.stack)}};
  if (o.pool_streams > 1) j["pool"] = {{"streams", o.pool_streams}, {"stack", stack_json(o.pool_stack)}};
  return j;
}

json op_json(const OpRef& op) {
  return {{"rank", op.rank},
          {"seq", op.seq},
          {"kind", op.kind},
          {"name", op.name},
          {"stream", op.on_host ? json(nullptr) : json(op.stream)},  // null: the host, no stream
          {"stream_name", op.stream_name},
          {"nvtx", nvtx_path(op.nvtx)},
          {"role", trace::to_string(op.role)},
          {"start_ns", op.start_ns},
          {"end_ns", op.end_ns},
          {"stack", stack_json(op.stack)},
          {"stream_origin", origin_json(op.stream_origin)}};
}

// The tensor's own block from the allocator history; null when unknown, with why where the
// buffer lies in a caching-allocator segment.
json tensor_json(const analysis::BufferRef& b) {
  if (!b.tensor) return b.tensor_unknown.empty() ? json(nullptr) : json{{"unknown", b.tensor_unknown}};
  return {{"address", hex(b.tensor)},
          {"bytes", b.tensor_bytes},
          {"offset", b.alloc_base + b.offset - b.tensor},
          {"stack", stack_json(b.tensor_stack)}};
}

json finding_json(const Finding& f) {
  json out = {{"kind", kind_id(f.kind)},
          {"key", f.key},
          {"title", f.title},
          {"first", op_json(f.first)},
          {"second", op_json(f.second)},
          {"buffer",
           {{"name", f.buffer.name},
            {"alloc_base", hex(f.buffer.alloc_base)},
            {"alloc_bytes", f.buffer.alloc_bytes},
            {"offset", f.buffer.offset},
            {"bytes", f.buffer.bytes},
            {"allocation", hex(f.buffer.allocation)},
            {"allocation_bytes", f.buffer.allocation_bytes},
            {"alloc_stack", stack_json(f.buffer.alloc_stack)},
            {"caching_allocator", f.buffer.caching_allocator},
            {"tensor", tensor_json(f.buffer)}}},
          {"missing_order", f.missing_order},
          {"occurrences", f.occurrences},
          {"ranks", f.ranks},
          {"tier", trace::to_string(f.tier)},
          {"exact", f.exact},
          {"detail", f.detail}};
  if (f.sync_seq) out["sync"] = {{"rank", f.sync_rank}, {"seq", f.sync_seq}, {"stack", stack_json(f.sync_stack)}};
  return out;
}

json trace_json(const analysis::TraceSummary& t) {
  return {{"path", t.path},         {"rank", t.rank},           {"records", t.records},
          {"operations", t.operations}, {"truncated", t.truncated}, {"truncation", t.truncation},
          {"records_lost", t.records_lost}, {"dropped_records", t.dropped_records}};
}

json sync_sites_json(const std::vector<analysis::SyncVerdict>& sites) {
  json out = json::array();
  for (const analysis::SyncVerdict& v : sites) {
    const bool costed = v.step_ns > 0;
    const bool predicted = costed && v.step_without_ns > 0;
    out.push_back({{"key", v.key},
                   {"what", v.what},
                   {"where", v.where},
                   {"verdict", analysis::to_string(v.verdict)},
                   {"instances", v.instances},
                   {"pairs", v.pairs},
                   {"kernels_without_footprint", v.unfootprinted},
                   {"stall_ns_per_step", costed ? json(v.stall_ns_per_step) : json(nullptr)},
                   {"step_ns", costed ? json(v.step_ns) : json(nullptr)},
                   {"predicted_step_ns", predicted ? json(v.step_without_ns) : json(nullptr)},
                   {"prediction", !predicted ? "none" : v.replaced ? "minimal-waits" : "without"},
                   {"finding", v.finding}});
  }
  return out;
}

}  // namespace

json json_report(const ReportInput& input) {
  const auto& a = input.analysis;
  json findings = json::array(), suppressed = json::array(), traces = json::array();
  uint64_t races = 0, possible = 0;
  for (const Finding& f : a.findings) {
    findings.push_back(finding_json(f));
    races += f.kind == analysis::FindingKind::Race;
    possible += f.kind == analysis::FindingKind::PossibleRace;
  }
  json kernels_by_tier = json::object();
  for (size_t t = 0; t < a.kernels_by_tier.size(); ++t)
    kernels_by_tier[trace::to_string(static_cast<trace::FootprintTier>(t))] = a.kernels_by_tier[t];
  for (const SuppressedFinding& s : input.suppressed) {
    json entry = finding_json(s.finding);
    entry["suppressed_by"] = {{"file", s.rule.file}, {"line", s.rule.line}, {"rule", s.rule.text}};
    suppressed.push_back(std::move(entry));
  }
  for (const auto& t : a.traces) traces.push_back(trace_json(t));
  return {{"schema_version", kJsonSchemaVersion},
          {"tool", {{"name", "streamhaz"}, {"version", input.tool_version}}},
          {"summary",
           {{"findings", a.findings.size()},
            {"races", races},
            {"possible_races", possible},
            {"oversync", a.findings.size() - races - possible},
            {"suppressed", input.suppressed.size()},
            {"operations_checked", a.operations_checked},
            {"operations_without_footprint", a.operations_without_footprint},
            {"kernels_by_tier", std::move(kernels_by_tier)}}},
          {"traces", std::move(traces)},
          {"warnings", a.warnings},
          {"findings", std::move(findings)},
          {"suppressed", std::move(suppressed)},
          {"sync_notes", a.sync_notes},
          {"sync_sites", sync_sites_json(a.sync_sites)},
          {"sync_scope", a.sync_scope},
          {"minimal_sync", a.minimal_sync}};
}

void write_json_report(std::ostream& out, const ReportInput& input) {
  // Invalid UTF-8 in a trace name must not abort the report: replace it.
  out << json_report(input).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace streamhaz::report
