// `streamhaz inspect TRACE...`: what a trace holds (header, counts per rank, stream and kind).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <tuple>
#include <vector>

#include "commands.h"
#include "streamhaz/trace/printable.h"
#include "streamhaz/trace/reader.h"
#include "messages.h"
#include "trace_stats.h"

namespace streamhaz::cli {
namespace {

// Names come from traces as bytes: invalid UTF-8 is replaced rather than aborting.
constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

std::string stream_flags_text(uint32_t flags) {
  if (flags & trace::kStreamLegacyDefault) return "legacy default";
  if (flags & trace::kStreamPerThreadDefault) return "per-thread default";
  return flags & trace::kStreamNonBlocking ? "non-blocking" : "blocking";
}

// Every string below comes from the trace: escaped (trace::printable) before it is printed.
std::string header_value(const nlohmann::json& h, const char* key) {
  auto it = h.find(key);
  if (it == h.end() || it->is_null()) return "-";
  return trace::printable(it->is_string() ? it->get<std::string>() : it->dump(-1, ' ', false, kReplace));
}

template <class R> uint64_t count_of(const TraceStats& s) { return s.by_kind[trace::Record(R{}).index()]; }

uint64_t count_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

// The traced driver calls by CUPTI callbacks (entry and exit each) or by the tracer's wrappers
// (one each), with the time the tracer spent in them: what the per-call floor of its cost is made
// of. Overall (most first), then per training step after the warm-up (most time first), where
// first-use costs do not count. `key`: the header's entry; `what`: how its counts are counted.
void print_driver_calls(const nlohmann::json& header, const char* key, const char* what, uint64_t steps,
                        std::ostream& out) {
  auto calls = header.find(key);
  if (calls == header.end() || !calls->is_object()) return;
  struct Row {
    std::string name;
    uint64_t callbacks, ns, step_callbacks = 0, step_ns = 0;
  };
  std::vector<Row> rows;
  for (auto c = calls->begin(); c != calls->end(); ++c) {
    if (!c->is_array() || c->size() < 2 ||
        !std::all_of(c->begin(), c->end(), [](const nlohmann::json& v) { return v.is_number_unsigned(); }))
      continue;
    Row r{c.key(), (*c)[0].get<uint64_t>(), (*c)[1].get<uint64_t>()};
    if (c->size() >= 4) r.step_callbacks = (*c)[2].get<uint64_t>(), r.step_ns = (*c)[3].get<uint64_t>();
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return;
  constexpr size_t kShown = 12;
  auto listed = [&](auto&& text) {
    std::string line;
    for (size_t i = 0; i < rows.size() && i < kShown; ++i) line += (i ? ", " : "") + text(rows[i]);
    if (rows.size() > kShown) line += fmt::format(" and {} more", rows.size() - kShown);
    return line;
  };
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.callbacks > b.callbacks; });
  out << "    driver calls " << what << ": "
      << listed([](const Row& r) {
           return fmt::format("{} {} x {:.1f} ms", trace::printable(r.name), r.callbacks, double(r.ns) / 1e6);
         })
      << "\n";
  if (!steps) return;
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.step_ns > b.step_ns; });
  out << "    the same per step after the first two: "
      << listed([&](const Row& r) {
           return fmt::format("{} {} x {:.1f} us", trace::printable(r.name), r.step_callbacks / steps,
                              double(r.step_ns) / 1e3 / double(steps));
         })
      << "\n";
}

// The tracer's own time by phase, from a trace recorded with STREAMHAZ_SELF_PROFILE=1.
void print_tracer_profile(const TraceStats& s, std::ostream& out) {
  auto it = s.header.find("tracer_profile");
  if (it == s.header.end() || !it->is_object()) return;
  const nlohmann::json& profile = *it;
  const uint64_t steps = count_field(profile, "steps");
  out << fmt::format("  tracer's own time (--self-profile), {} operations; us/step: per step after the first two "
                     "({} steps):\n",
                     s.operations, steps);
  out << fmt::format("    {:<16} {:<16} {:>10} {:>10} {:>9} {:>9} {:>12}\n", "phase", "inside", "calls", "total ms",
                     "ns/call", "ns/op", "us/step");
  if (auto rows = profile.find("phases"); rows != profile.end() && rows->is_array())
    for (const nlohmann::json& row : *rows) {
      if (!row.is_object()) continue;
      const uint64_t calls = count_field(row, "calls"), ns = count_field(row, "ns");
      if (calls == 0) continue;
      const std::string inside = header_value(row, "inside");
      // us/step: the time spent inside steps, per step, with its calls per step.
      const uint64_t step_calls = count_field(row, "step_calls"), step_ns = count_field(row, "step_ns");
      const std::string per_step =
          steps ? fmt::format("{:.1f} ({}x)", double(step_ns) / 1e3 / double(steps), step_calls / steps) : "-";
      out << fmt::format("    {:<16} {:<16} {:>10} {:>10.1f} {:>9} {:>9} {:>12}\n", header_value(row, "name"),
                         inside.empty() ? "-" : inside, calls, double(ns) / 1e6, ns / calls,
                         s.operations ? ns / s.operations : 0, per_step);
    }
  if (auto u = s.header.find("native_unwinds"); u != s.header.end() && u->is_object()) {
    out << fmt::format("    native unwinds: {} by learned frame sizes ({} ended early at a frame of no known size, {} "
                       "stepped over a frame of varying size where their thread saw it before), {} by libgcc ({} of "
                       "them checks of a learned walk, {} differing)\n",
                       count_field(*u, "fast"), count_field(*u, "truncated"), count_field(*u, "through_varying"),
                       count_field(*u, "slow"), count_field(*u, "checked"), count_field(*u, "differed"));
    if (u->contains("frames_recalled"))
      out << fmt::format("    frames read by learned walks: {} recalled from their thread's recent walks, {} asked of "
                         "the frame-size table\n",
                         count_field(*u, "frames_recalled"), count_field(*u, "frames_asked"));
    if (auto f = u->find("failed"); f != u->end() && f->is_object())
      out << fmt::format("    learned walks that failed: in the CUDA plumbing {} at an unknown address and {} at a size "
                         "that varies, in the program's frames {} and {}, {} off the stack\n",
                         count_field(*f, "plumbing_unknown"), count_field(*f, "plumbing_varies"),
                         count_field(*f, "unknown"), count_field(*f, "varies"), count_field(*f, "off_stack"));
  }
  print_driver_calls(s.header, "driver_calls", "by CUPTI's callbacks (entry and exit each, with the time in the tracer)",
                     steps, out);
  print_driver_calls(s.header, "driver_calls_wrapped", "by the tracer's wrappers (one each, with the time in the tracer)",
                     steps, out);
  if (auto threads = profile.find("threads"); threads != profile.end() && threads->is_array())
    for (const nlohmann::json& t : *threads) {
      if (!t.is_object()) continue;
      auto phases = t.find("phases");
      if (phases == t.end() || !phases->is_object()) continue;
      std::string line;
      for (auto p = phases->begin(); p != phases->end(); ++p) {
        if (!p->is_array() || p->size() != 2 || !(*p)[0].is_number_unsigned() || !(*p)[1].is_number_unsigned()) continue;
        line += fmt::format("{}{} {} x {:.1f} ms", line.empty() ? "" : ", ", trace::printable(p.key()),
                            (*p)[0].get<uint64_t>(), double((*p)[1].get<uint64_t>()) / 1e6);
      }
      out << fmt::format("    thread {} \"{}\": {}\n", header_value(t, "tid"), header_value(t, "name"), line);
    }
}

void print_text(const TraceStats& s, std::ostream& out) {
  out << fmt::format("{}: {} bytes, {} chunks, {} records, {}\n", trace::printable(s.path), s.file_bytes, s.chunks,
                     s.records, s.truncated ? "TRUNCATED (" + trace::printable(s.truncation) + ")" : "complete");
  const nlohmann::json& h = s.header;
  out << fmt::format("  rank {} of {}, pid {}, host {}\n", header_value(h, "rank"), header_value(h, "world_size"),
                     header_value(h, "pid"), header_value(h, "host"));
  if (auto it = h.find("command"); it != h.end() && it->is_array()) {
    std::string cmd;
    for (const auto& a : *it)
      cmd += (cmd.empty() ? "" : " ") + (a.is_string() ? a.get<std::string>() : a.dump(-1, ' ', false, kReplace));
    out << "  command: " << trace::printable(cmd) << "\n";
  }
  out << fmt::format("  clock {}, footprints {}, CUDA driver {}, runtime {}, NCCL {}\n", header_value(h, "clock"),
                     header_value(h, "footprints"), header_value(h, "cuda_driver"), header_value(h, "cuda_runtime"),
                     header_value(h, "nccl_version"));
  if (auto it = h.find("devices"); it != h.end() && it->is_array())
    for (const auto& d : *it) out << fmt::format("  device {}: {}\n", header_value(d, "index"), header_value(d, "name"));
  // Traces from before GPU times were sampled have no gpu_times: they timed everything.
  const std::string gpu_times = h.contains("gpu_times") ? header_value(h, "gpu_times") : "all";
  out << fmt::format("  operations: {} ({} with GPU timestamps; GPU times {}), kernels without footprint: {} "
                     "(ordering only)\n",
                     s.operations, s.timed_operations, gpu_times, s.kernels_without_footprint);
  // Written where the tracer's driver wrappers recorded the hot calls (docs/tracer.md).
  if (auto w = h.find("driver_wrappers"); w != h.end() && w->is_object())
    out << fmt::format("  driver wrappers: {} audit(s) by CUPTI's callbacks, {} call(s) seen in the wrappers, {} around "
                       "them\n",
                       header_value(*w, "audits"), header_value(*w, "calls_seen_in_wrappers"),
                       header_value(*w, "calls_seen_around"));
  // Written where GPU times ended after steps counted from the program's repeating calls.
  if (auto p = h.find("gpu_times_steps_from_pattern"); p != h.end() && p->is_object())
    out << fmt::format("  GPU times ended at #{}, after {} repeats of the program's collectives and host "
                       "synchronisations ({} calls a step; no step range)\n",
                       header_value(*p, "seq"), header_value(*p, "periods"), header_value(*p, "period"));
  out << fmt::format("  allocations: {} ({} bytes)\n", s.allocations, s.allocated_bytes);
  if (s.strings_cut) out << "  warning: " << trace::printable(s.strings_cut_note) << "\n";
  out << fmt::format("  stacks: {} call sites, {} frames ({} native, in {} modules), {} calls with a stack\n",
                     count_of<trace::CallsiteDef>(s), count_of<trace::FrameDef>(s), s.native_frames,
                     count_of<trace::ModuleDef>(s), count_of<trace::StackRef>(s));
  out << "  streams:\n";
  for (const auto& [id, st] : s.streams) {
    std::string ops;
    for (const auto& [kind, n] : st.operations) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", trace::printable(kind), n);
    out << fmt::format("    stream {} \"{}\" (device {}, {}, priority {}): {}; event records {}, waits {}, host syncs {}\n",
                       id, st.name.empty() ? "unnamed" : trace::printable(st.name), st.device, stream_flags_text(st.flags), st.priority,
                       ops.empty() ? "no operations" : ops, st.records, st.waits, st.syncs);
  }
  print_tracer_profile(s, out);
  out << "  records by kind:";
  for (size_t k = 0; k < s.by_kind.size(); ++k)
    if (s.by_kind[k]) out << fmt::format(" {} {}", trace::record_name(k), s.by_kind[k]);
  out << "\n";
}

nlohmann::json to_json(const TraceStats& s) {
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& [id, st] : s.streams)
    streams.push_back({{"id", id}, {"name", st.name}, {"device", st.device}, {"kind", stream_flags_text(st.flags)},
                       {"priority", st.priority}, {"operations", st.operations}, {"event_records", st.records},
                       {"waits", st.waits}, {"host_syncs", st.syncs}});
  nlohmann::json kinds = nlohmann::json::object();
  for (size_t k = 0; k < s.by_kind.size(); ++k)
    if (s.by_kind[k]) kinds[trace::record_name(k)] = s.by_kind[k];
  return {{"path", s.path},
          {"header", s.header},
          {"file_bytes", s.file_bytes},
          {"chunks", s.chunks},
          {"records", s.records},
          {"truncated", s.truncated},
          {"truncation", s.truncation},
          {"strings_cut", s.strings_cut},
          {"operations", s.operations},
          {"timed_operations", s.timed_operations},
          {"kernels_without_footprint", s.kernels_without_footprint},
          {"allocations", s.allocations},
          {"allocated_bytes", s.allocated_bytes},
          {"stacks",
           {{"callsites", count_of<trace::CallsiteDef>(s)},
            {"frames", count_of<trace::FrameDef>(s)},
            {"native_frames", s.native_frames},
            {"modules", count_of<trace::ModuleDef>(s)},
            {"stack_refs", count_of<trace::StackRef>(s)}}},
          {"streams", streams},
          {"records_by_kind", kinds}};
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("inspect", "Show what a trace holds: header, streams, counts per kind");
  auto traces = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("TRACE", *traces, "Trace files or folders of per-rank .shz files")->required();
  cmd->add_flag("--json", *json, "Print one JSON document instead of text");
  cmd->footer("Exit status: 0, or 2 when a trace cannot be read.");
  cmd->callback([traces, json, &exit_code] {
    nlohmann::json all = nlohmann::json::array();
    for (const std::string& path : trace::expand_trace_paths(*traces)) {
      TraceStats s = collect_trace_stats(path);
      if (*json) all.push_back(to_json(s));
      else print_text(s, std::cout);
    }
    if (*json) std::cout << all.dump(2, ' ', false, kReplace) << "\n";
    exit_code = stdout_written("inspect") ? kExitClean : kExitUsage;
  });
}

}  // namespace streamhaz::cli
