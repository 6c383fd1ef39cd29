#include "streamhaz/report/text_report.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "streamhaz/analysis/kernel_name.h"
#include "streamhaz/report/stack_text.h"
#include "streamhaz/trace/printable.h"

namespace streamhaz::report {
namespace {

using analysis::Finding;
using analysis::FindingKind;
using analysis::OpRef;

constexpr const char* kRule = "==================";

std::string plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string user_line(const analysis::Stack& stack) {
  const analysis::StackFrame* f = innermost_user_frame(stack);
  return printable(frame_brief(f ? *f : stack.front()));
}

// "created at train.py:42 in __init__" / "first used at ..., one of 32 streams created at ...":
// where an unnamed stream comes from.
std::string origin_text(const analysis::StreamOrigin& o) {
  if (o.kind == analysis::StreamOriginKind::None || o.stack.empty()) return {};
  if (o.kind == analysis::StreamOriginKind::Created) return "created at " + user_line(o.stack);
  std::string text = "first used at " + user_line(o.stack);
  if (o.pool_streams > 1 && !o.pool_stack.empty())
    text += fmt::format(", one of {} streams created together at {}", o.pool_streams, user_line(o.pool_stack));
  return text;
}

std::string stream_label(const OpRef& op) {
  if (op.on_host) return "the host (no stream)";
  // A stream named by the program (NVTX, annotations) goes by its name; otherwise by where it
  // was made, when the trace has stacks.
  const bool unnamed = op.stream_name.empty() || op.stream_name == fmt::format("stream {}", op.stream);
  const std::string origin = origin_text(op.stream_origin);
  if (unnamed && !origin.empty()) return fmt::format("stream {} ({})", op.stream, origin);
  if (op.stream_name.empty()) return fmt::format("stream {}", op.stream);
  return fmt::format("stream \"{}\" (id {})", printable(op.stream_name), op.stream);
}

void write_stack(std::ostream& out, const analysis::Stack& stack, bool full, const char* indent = "      ") {
  for (const std::string& line : stack_lines(stack, full)) out << indent << printable(line) << "\n";
}

// "ncclAllReduce" alone when the name is the kind; "kernel scale<float>" otherwise.
std::string op_label(const OpRef& op) {
  if (op.name.empty() || op.name == op.kind) return printable(op.kind);
  const std::string name = op.kind == "kernel" ? analysis::readable_kernel_name(op.name) : op.name;
  return fmt::format("{} {}", printable(op.kind), printable(name));
}

void write_op(std::ostream& out, const std::string& heading, const OpRef& op, bool full) {
  out << "  " << heading << " by rank " << op.rank << ", " << stream_label(op) << ":\n";
  out << "    " << op_label(op) << "  [seq " << op.seq << "]\n";
  if (const std::string nvtx = nvtx_path(op.nvtx); !nvtx.empty()) out << "    NVTX: " << printable(nvtx) << "\n";
  if (!op.stack.empty()) {
    out << "    Stack:\n";
    write_stack(out, op.stack, full);
  }
}

bool overlapped_in_time(const OpRef& a, const OpRef& b) {
  const bool timed = a.end_ns > a.start_ns && b.end_ns > b.start_ns;
  return timed && a.start_ns < b.end_ns && b.start_ns < a.end_ns;
}

void write_race_ops(std::ostream& out, const Finding& f, bool full) {
  // As ThreadSanitizer does: the later access first, then the "previous" one it races with.
  // The byte range is given once, on the Buffer line: folded findings hold the union over
  // their occurrences, which is not what the one occurrence shown here touched.
  const std::string buffer = printable(f.buffer.name);
  write_op(out, fmt::format("{} of {}", capitalised(trace::to_string(f.second.role)), buffer), f.second, full);
  write_op(out, fmt::format("Previous {} of {}", trace::to_string(f.first.role), buffer), f.first, full);
}

// The bytes a finding names, from `lo`. A pointer-tier access is a launch argument: where it
// points, not how far the kernel reads or writes from there, so its one byte is no extent.
std::string byte_range(const Finding& f, uint64_t lo, const std::string& within = "") {
  if (f.tier != trace::FootprintTier::Pointer) return fmt::format("bytes [{}, {}){}", lo, lo + f.buffer.bytes, within);
  if (f.buffer.bytes <= 1)
    return fmt::format("byte {}{}, where a launch argument points (the kernel's extent is unknown)", lo, within);
  return fmt::format("bytes [{}, {}){}, where launch arguments point (the kernel's extent is unknown)", lo,
                     lo + f.buffer.bytes, within);
}

// With an allocation stack: where the buffer was allocated, and the bytes within that allocation.
void write_allocation_site(std::ostream& out, const Finding& f, bool full) {
  const auto& b = f.buffer;
  const analysis::StackFrame* site = innermost_user_frame(b.alloc_stack);
  const std::string where = printable(frame_brief(site ? *site : b.alloc_stack.front()));
  // A segment PyTorch's allocator requested on one of its own threads (autograd's backward) has
  // only native frames: the innermost is the allocator's, which names nothing of the program.
  const std::string requested = site || !b.caching_allocator
                                    ? "at " + where
                                    : std::string("by native code alone (no Python frame: a PyTorch thread such as "
                                                  "autograd's backward)");
  const uint64_t lo = b.alloc_base + b.offset - b.allocation;  // within the traced allocation
  const std::string named = b.name == fmt::format("allocation {:#x}", b.alloc_base) ? "" : printable(b.name) + ": ";
  if (b.tensor) {
    // The tensor's own block, from the allocator's history: its line is the one to act on.
    const uint64_t in_tensor = b.alloc_base + b.offset - b.tensor;
    out << fmt::format("  Buffer: {}a tensor allocated at {} ({:#x}, {}, from PyTorch's allocator history), ",
                       named, b.tensor_stack.empty() ? std::string("an unknown line (traced without stacks)")
                                                     : user_line(b.tensor_stack),
                       b.tensor, plural(b.tensor_bytes, "byte", "bytes"));
    // Folded occurrences may span several tensors of the segment (two buckets of one line).
    if (in_tensor + b.bytes <= b.tensor_bytes)
      out << byte_range(f, in_tensor, " of it");
    else
      out << "and the tensors after it: " << byte_range(f, lo, " of the segment");
    if (f.occurrences > 1) out << fmt::format(" over all {} occurrences", f.occurrences);
    out << fmt::format("; it lies in a caching-allocator segment ({:#x}, {}) first requested {}",
                       b.allocation, plural(b.allocation_bytes, "byte", "bytes"), requested);
    if (!b.tensor_stack.empty()) {
      out << "\n    Tensor allocation stack:\n";
      write_stack(out, b.tensor_stack, full);
    } else {
      out << "\n";
    }
    out << "    Segment allocation stack:\n";
    write_stack(out, b.alloc_stack, full);
    return;
  }
  if (b.caching_allocator)
    out << fmt::format("  Buffer: {}a PyTorch caching-allocator segment serving many tensors ({:#x}, {}; the segment "
                       "was first requested {}, which need not be this tensor's line); this tensor: {}",
                       named, b.allocation, plural(b.allocation_bytes, "byte", "bytes"), requested,
                       byte_range(f, lo, " of it"));
  else
    out << fmt::format("  Buffer: {}allocation at {} ({:#x}, {}), {}", named, where, b.allocation,
                       plural(b.allocation_bytes, "byte", "bytes"), byte_range(f, lo));
  if (f.occurrences > 1) out << fmt::format(" over all {} occurrences", f.occurrences);
  if (!b.tensor_unknown.empty()) out << "\n    This tensor's own line is unknown: " << printable(b.tensor_unknown);
  out << "\n    Allocation stack:\n";
  write_stack(out, b.alloc_stack, full);
}

void write_buffer(std::ostream& out, const Finding& f, bool full) {
  const auto& b = f.buffer;
  if (!b.alloc_stack.empty() && b.allocation) return write_allocation_site(out, f, full);
  out << "  Buffer: " << printable(b.name);
  if (b.alloc_base != 0)
    out << fmt::format(" (allocation {:#x}, {})", b.alloc_base, plural(b.alloc_bytes, "byte", "bytes"));
  else
    out << " (in no traced allocation)";
  out << ", conflicting " << byte_range(f, b.offset);
  if (f.occurrences > 1) out << fmt::format(" over all {} occurrences", f.occurrences);
  out << "\n";
}

void write_finding(std::ostream& out, const Finding& f, bool full) {
  out << kRule << "\n";
  out << "streamhaz: " << kind_id(f.kind) << ": " << printable(f.title) << "\n";
  if (f.kind == FindingKind::Race || f.kind == FindingKind::PossibleRace) {
    write_race_ops(out, f, full);
  } else {  // over-synchronisation: the call itself, and the operations on either side of it
    if (!f.sync_stack.empty()) {
      const analysis::StackFrame* site = innermost_user_frame(f.sync_stack);
      out << "  Synchronisation called at " << printable(frame_brief(site ? *site : f.sync_stack.front()))
          << " by rank " << f.sync_rank << "  [seq " << f.sync_seq << "]\n";
      out << "    Stack:\n";
      write_stack(out, f.sync_stack, full);
    }
    if (f.first.seq) write_op(out, "After", f.first, full);
    if (f.second.seq) write_op(out, "Before", f.second, full);
  }
  if (f.kind == FindingKind::Race) write_buffer(out, f, full);
  if (!f.missing_order.empty())
    out << "  " << (f.kind == FindingKind::OverSync ? "Proposal: " : "Missing order: ") << printable(f.missing_order) << "\n";
  if (f.kind != FindingKind::OverSync && overlapped_in_time(f.first, f.second))
    out << "  The captured run executed the two operations overlapping in time.\n";
  out << "  Occurrences: " << f.occurrences;
  if (!f.ranks.empty()) out << fmt::format(" (ranks {})", fmt::join(f.ranks, ", "));
  out << "\n";
  out << "  Footprint: " << trace::to_string(f.tier) << " tier, "
      << (f.exact ? "exact byte ranges" : "approximate byte ranges")
      << (f.tier == trace::FootprintTier::Memo ? " (instrumented on an identical earlier launch)" : "")
      << (f.tier == trace::FootprintTier::Coarse ? " (instrumented, recorded at 32 KiB granules: the launch touched more than 1 GiB)" : "")
      << "\n";
  if (!f.detail.empty()) out << "  Detail: " << printable(f.detail) << "\n";
  out << "  Key: " << printable(f.key) << "\n";
  out << kRule << "\n";
}

}  // namespace

std::string printable(const std::string& text) { return trace::printable(text); }

// "(kernels: 12 exact, 300 memo, 40 pointer only, 3 without footprint: ordering only)"
std::string footprint_coverage(const analysis::AnalysisResult& a) {
  std::vector<std::string> parts;
  for (uint8_t place = 1; place <= trace::kFootprintTierCount; ++place)
    for (uint8_t t = 0; t < trace::kFootprintTierCount; ++t)
      if (trace::kFootprintTiers[t].coverage_order == place)
        if (uint64_t n = a.kernels_by_tier[t]) parts.push_back(fmt::format("{} {}", n, trace::kFootprintTiers[t].name));
  if (uint64_t n = a.kernels_by_tier[static_cast<size_t>(trace::FootprintTier::Pointer)])
    parts.push_back(fmt::format("{} pointer only", n));
  if (a.operations_without_footprint)
    parts.push_back(fmt::format("{} without footprint: ordering only", a.operations_without_footprint));
  if (parts.empty()) return {};
  return fmt::format(" (kernels: {})", fmt::join(parts, ", "));
}

std::string summary_line(const ReportInput& input) {
  const auto& a = input.analysis;
  uint64_t races = 0, possible = 0, oversync = 0;
  for (const Finding& f : a.findings)
    (f.kind == FindingKind::Race ? races : f.kind == FindingKind::PossibleRace ? possible : oversync)++;
  std::string line = "streamhaz: ";
  if (a.findings.empty()) {
    line += "no findings";
  } else {
    std::vector<std::string> parts;
    if (races) parts.push_back(plural(races, "race", "races"));
    if (possible) parts.push_back(plural(possible, "possible race", "possible races"));
    if (oversync) parts.push_back(plural(oversync, "over-synchronisation", "over-synchronisations"));
    line += fmt::format("{}", fmt::join(parts, " and "));
  }
  line += fmt::format(" in {}, {} checked", plural(a.traces.size(), "trace", "traces"),
                      plural(a.operations_checked, "operation", "operations"));
  line += footprint_coverage(a);
  if (!input.suppressed.empty()) line += fmt::format("; {} suppressed", input.suppressed.size());
  if (!a.warnings.empty()) line += fmt::format("; {}", plural(a.warnings.size(), "warning", "warnings"));
  return line;
}

void write_text_report(std::ostream& out, const ReportInput& input) {
  for (const Finding& f : input.analysis.findings) write_finding(out, f, input.full_stacks);
  const auto& a = input.analysis;
  const size_t oversync = std::count_if(a.findings.begin(), a.findings.end(),
                                        [](const Finding& f) { return f.kind == FindingKind::OverSync; });
  if (input.sync_notes) {
    if (!a.sync_scope.empty()) out << "note: over-synchronisation judged in " << printable(a.sync_scope) << "\n";
    for (const std::string& n : a.sync_notes) out << "note: " << printable(n) << "\n";
  }
  else if (!a.sync_notes.empty())
    out << fmt::format("over-synchronisation: {} judged{}, {} ({} lists every verdict{})\n",
                       plural(a.sync_notes.size() + oversync, "synchronisation site", "synchronisation sites"),
                       a.sync_scope.empty() ? "" : " in " + printable(a.sync_scope),
                       oversync ? plural(oversync, "finding", "findings") : std::string("no finding"),
                       "--sync-notes", oversync ? "" : " and the minimal synchronisation");
  // The minimal synchronisation is what an over-synchronisation finding asks for: shown with one.
  if (!a.minimal_sync.empty() && (input.sync_notes || oversync)) {
    out << "Minimal synchronisation (event waits that order every conflicting pair the run orders):\n";
    for (const std::string& a : input.analysis.minimal_sync) out << "  " << printable(a) << "\n";
  }
  for (const std::string& w : input.analysis.warnings) out << "warning: " << printable(w) << "\n";
  out << summary_line(input) << "\n";
}

}  // namespace streamhaz::report
