#include "streamhaz/tracer/settings.h"

#include <charconv>

#include "streamhaz/tracer/footprint_table.h"

namespace streamhaz::tracer {
namespace {

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

constexpr std::pair<Footprints, const char*> kFootprintNames[] = {
    {Footprints::Api, "api"}, {Footprints::Pointer, "pointer"}, {Footprints::Static, "static"}, {Footprints::Exact, "exact"}};

constexpr std::pair<Stacks, const char*> kStackNames[] = {
    {Stacks::Auto, "auto"}, {Stacks::All, "all"}, {Stacks::Off, "off"}};

constexpr std::pair<ExactLaunches, const char*> kExactLaunchNames[] = {
    {ExactLaunches::Memo, "memo"}, {ExactLaunches::Every, "every"}};

// One of a table's names into `into`; else why not ("expected auto, all or off, got 'x'").
template <typename T, size_t N>
std::string parse_named(std::string_view text, const std::pair<T, const char*> (&names)[N], T& into) {
  std::string expected;
  for (size_t i = 0; i < N; ++i) {
    if (text == names[i].second) {
      into = names[i].first;
      return {};
    }
    expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i].second);
  }
  return "expected " + expected + ", got " + quoted(text);
}

std::string parse_stacks(std::string_view text, TracerSettings& s) { return parse_named(text, kStackNames, s.stacks); }

std::string parse_exact_launches(std::string_view text, TracerSettings& s) {
  return parse_named(text, kExactLaunchNames, s.exact_launches);
}

std::string parse_path_prefix_map(std::string_view text, TracerSettings& s) {
  if (text == "none") {
    s.path_prefix_map = {};
    return {};
  }
  return PathPrefixMap::parse(text, s.path_prefix_map);
}

std::string parse_out_dir(std::string_view text, TracerSettings& s) {
  s.out_dir = std::string(text);
  return {};
}

std::string parse_footprints(std::string_view text, TracerSettings& s) {
  return parse_named(text, kFootprintNames, s.footprints);
}

std::string parse_gpu_times(std::string_view text, TracerSettings& s) {
  std::string why;
  auto policy = parse_timing_policy(text, why);
  if (!policy) return why;
  s.gpu_times = *policy;
  return {};
}

std::string parse_step_range(std::string_view text, TracerSettings& s) {
  if (text.find('/') != std::string_view::npos) return "a range name, without '/', got " + quoted(text);
  s.step_range = std::string(text);
  return {};
}

constexpr long long kMaxFlushMs = 24LL * 3600 * 1000;

std::string parse_flush_ms(std::string_view text, TracerSettings& s) {
  long long ms = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms < 0 || ms > kMaxFlushMs)
    return "expected milliseconds from 0 (only at exit) to " + std::to_string(kMaxFlushMs) + " (a day), got " +
           quoted(text);
  s.flush_period = std::chrono::milliseconds(ms);
  return {};
}

std::string parse_fine_regions(std::string_view text, TracerSettings& s) {
  long long n = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0 || n > footprint::kEntries)
    return "expected a count of 8 KiB regions from 0 (all) to " + std::to_string(footprint::kEntries) + ", got " +
           quoted(text);
  s.exact_fine_regions = static_cast<uint32_t>(n);
  return {};
}

// A yes/no setting into `into`; else why not.
std::string parse_switch(std::string_view text, bool& into, const char* what_no_means) {
  for (const char* yes : {"1", "true", "yes", "on"}) {
    if (text == yes) {
      into = true;
      return {};
    }
  }
  for (const char* no : {"0", "false", "no", "off"}) {
    if (text == no) {
      into = false;
      return {};
    }
  }
  return std::string("expected 1, true, yes or on (0, false, no or off: ") + what_no_means + "), got " + quoted(text);
}

std::string parse_disable(std::string_view text, TracerSettings& s) { return parse_switch(text, s.disabled, "enabled"); }

std::string parse_self_profile(std::string_view text, TracerSettings& s) {
  return parse_switch(text, s.self_profile, "not timed");
}

std::string parse_allocator_history(std::string_view text, TracerSettings& s) {
  return parse_switch(text, s.allocator_history, "not recorded");
}

std::string parse_driver_wrappers(std::string_view text, TracerSettings& s) {
  return parse_switch(text, s.driver_wrappers, "CUPTI's callbacks throughout");
}

const SettingSpec kSettings[] = {
    {"STREAMHAZ_OUT_DIR", "--out", "DIR", "Folder for the trace files (one per process)", parse_out_dir,
     [](const TracerSettings& s) { return s.out_dir; }},
    {"STREAMHAZ_FOOTPRINTS", "--footprints", "api|pointer|static|exact",
     "Kernel footprint tier (docs/footprints.md): pointer makes launch arguments that point into traced "
     "allocations accesses of unknown extent; api records no kernel arguments; static also keeps the argument "
     "bytes for `check --kernels`; exact instruments every kernel (Compute Sanitizer; no GPU times)",
     parse_footprints, [](const TracerSettings& s) { return std::string(footprints_name(s.footprints)); }},
    {"STREAMHAZ_EXACT_LAUNCHES", "--exact-launches", "memo|every",
     "Which launches the exact tier instruments (docs/footprints.md): memo reuses the footprint two identical "
     "earlier launches (function, grid, block, argument bytes) agreed on and runs the kernel uninstrumented "
     "(tier memo; a kernel that reads its addresses from memory is found when its launches disagree), and once "
     "the memo serves most launches takes the instrumentation off (launches it does not know then run bare, at "
     "the pointer tier); every instruments every launch",
     parse_exact_launches, [](const TracerSettings& s) { return std::string(exact_launches_name(s.exact_launches)); }},
    {"STREAMHAZ_STACKS", "--stacks", "auto|all|off",
     "Call stacks of traced calls (docs/tracer.md): auto gives every record its Python frames, and native "
     "frames (symbolised at check time) to all but kernel launches where the thread runs no Python; all "
     "unwinds kernel launches too; off records none",
     parse_stacks, [](const TracerSettings& s) { return std::string(stacks_name(s.stacks)); }},
    {"STREAMHAZ_PATH_PREFIX_MAP", "--path-prefix-map", "OLD=NEW[;OLD=NEW...]|none",
     "Rewrite the start of source and module paths in call stacks, as -ffile-prefix-map does (`$PWD/=` makes "
     "them relative to the working folder): the trace then names no folder of this machine",
     parse_path_prefix_map,
     [](const TracerSettings& s) { return s.path_prefix_map.empty() ? std::string("none") : s.path_prefix_map.describe(); }},
    {"STREAMHAZ_GPU_TIMES", "--gpu-times", "steps[:K[/N]]|all|off|sampled[:WINDOW_MS/PERIOD_MS]",
     "GPU start/end times: steps (steps:4) times from the start through the K steps after the first "
     "(warm-up) one, then nothing (without a step range, the steps of the program's repeating collectives and "
     "host synchronisations; with neither for 300 s: its start, and its first K steps should they come); /N adds one step in N after those and sampled times windows, both at about the cost of all "
     "for the rest of the run; every operation is traced in every mode (docs/tracer.md)",
     parse_gpu_times, [](const TracerSettings& s) { return s.gpu_times.describe(); }},
    {"STREAMHAZ_STEP_RANGE", "--step-range", "NAME",
     "NVTX range around one training step: its outermost instances are the steps GPU times follow "
     "(as `check --step-range` reads them)",
     parse_step_range, [](const TracerSettings& s) { return s.step_range; }},
    {"STREAMHAZ_FLUSH_MS", "--flush-ms", "MS",
     "How often buffered records go to the file, in ms (0: only at exit); a killed process loses at most "
     "this much",
     parse_flush_ms, [](const TracerSettings& s) { return std::to_string(s.flush_period.count()); }},
    {"STREAMHAZ_EXACT_FINE_REGIONS", nullptr, "N",
     "Diagnostics: how many 8 KiB regions the exact tier's 128-byte table holds per launch (0: all, 1 GiB); "
     "fewer send more launches to the 32 KiB table (tier coarse), to measure what that costs in precision",
     parse_fine_regions, [](const TracerSettings& s) { return std::to_string(s.exact_fine_regions); }},
    {"STREAMHAZ_SELF_PROFILE", "--self-profile", "on|off",
     "Time the tracer's own phases (callbacks, unwinding, Python frames, stacks, the recorder's lock, GPU "
     "times, compression) per thread, and write the sums into the trace; `streamhaz inspect` prints them",
     parse_self_profile, [](const TracerSettings& s) { return std::string(s.self_profile ? "on" : "off"); }},
    {"STREAMHAZ_ALLOCATOR_HISTORY", "--allocator-history", "on|off",
     "In PyTorch processes, record the caching allocator's history (each tensor's block and the Python line "
     "that allocated it) so that findings name the tensor's own line, not only its segment's; costs host time "
     "per allocation (docs/tracer.md)",
     parse_allocator_history, [](const TracerSettings& s) { return std::string(s.allocator_history ? "on" : "off"); }},
    {"STREAMHAZ_DRIVER_WRAPPERS", "--driver-wrappers", "on|off",
     "Record launches, copies, memsets, event records, waits and queries, event creations and destructions in wrappers that the tracer hands "
     "out where the program looks the driver up, instead of in CUPTI's callbacks, while no GPU times are "
     "collected (after the timed steps): the same records without CUPTI's dispatch; CUPTI's callbacks audit "
     "them 200 ms in every 10 s and take over for good at a call that went around them (docs/tracer.md)",
     parse_driver_wrappers, [](const TracerSettings& s) { return std::string(s.driver_wrappers ? "on" : "off"); }},
    {"STREAMHAZ_DISABLE", nullptr, "1|0", "Load the tracer but record nothing", parse_disable,
     [](const TracerSettings& s) { return std::string(s.disabled ? "1" : "0"); }},
};

}  // namespace

const char* footprints_name(Footprints f) {
  for (const auto& [tier, name] : kFootprintNames)
    if (tier == f) return name;
  return "api";
}

const char* exact_launches_name(ExactLaunches e) {
  for (const auto& [mode, name] : kExactLaunchNames)
    if (mode == e) return name;
  return "memo";
}

const char* stacks_name(Stacks s) {
  for (const auto& [mode, name] : kStackNames)
    if (mode == s) return name;
  return "auto";
}

std::span<const SettingSpec> tracer_settings() { return kSettings; }

std::optional<std::string> setting_error(const SettingSpec& spec, std::string_view text) {
  TracerSettings scratch;
  std::string why = spec.parse(text, scratch);
  if (why.empty()) return std::nullopt;
  return why;
}

TracerSettings read_tracer_settings(const EnvLookup& lookup, std::vector<std::string>& warnings) {
  TracerSettings s;
  const TracerSettings defaults;
  for (const SettingSpec& spec : kSettings) {
    const char* value = lookup(spec.env);
    if (!value || !*value) continue;
    std::string why = spec.parse(value, s);
    if (!why.empty()) warnings.push_back(std::string(spec.env) + ": " + why + "; using " + spec.show(defaults));
  }
  return s;
}

}  // namespace streamhaz::tracer
