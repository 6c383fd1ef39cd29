// The tracer's settings, in one table: each has its environment variable, its type, default,
// help, and the parser that validates it. The tracer reads them from its process's
// environment; `streamhaz run` builds its options, its --help and its early checks from the
// same table, so a value is spelled, validated and documented in one place.
//
// A value the tracer cannot read never stops the traced program: one warning, worded the same
// for every setting ("STREAMHAZ_X: why; using DEFAULT"), and the default. `streamhaz run`
// rejects it before starting anything.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "streamhaz/tracer/path_prefix_map.h"
#include "streamhaz/tracer/timing_policy.h"

namespace streamhaz::tracer {

// What kernels record about the bytes they touch. Parameter bytes are gathered in every tier
// but api; `pointer` turns launch arguments that point into traced allocations into Access
// records of the pointer tier (extent and direction unknown).
enum class Footprints { Api, Pointer, Static, Exact };
const char* footprints_name(Footprints f);

// Which records carry call stacks: auto gives every record its Python frames (where the thread
// runs Python) and native frames to all but kernel launches elsewhere; all unwinds native
// frames for kernel launches too; off records none.
enum class Stacks { Auto, All, Off };
const char* stacks_name(Stacks s);

// Which launches the exact tier instruments: memo instruments a launch until two identical ones
// (function, grid, block, argument bytes) reported the same bytes, then reuses that footprint
// (tier memo) and runs the kernel uninstrumented; every instruments every launch.
enum class ExactLaunches { Memo, Every };
const char* exact_launches_name(ExactLaunches e);

struct TracerSettings {
  std::string out_dir = "streamhaz-trace";
  Footprints footprints = Footprints::Pointer;
  Stacks stacks = Stacks::Auto;
  ExactLaunches exact_launches = ExactLaunches::Memo;
  uint32_t exact_fine_regions = 0;  // diagnostics: the exact tier's fine table limit (0: all of it)
  PathPrefixMap path_prefix_map;  // applied to the paths of stack frames and modules
  TimingPolicy gpu_times;
  std::string step_range = "step";  // the NVTX range around one training step (GPU times by steps)
  std::chrono::milliseconds flush_period{1000};  // 0: only at exit
  bool disabled = false;
  bool self_profile = false;  // time the tracer's own phases (self_profile.h)
  bool allocator_history = false;  // PyTorch's allocator history (allocator_history.h)
  // The hot driver calls recorded by wrappers handed out at lookup while no GPU times are
  // collected, instead of by CUPTI's callbacks (tracer/glue/driver_wrappers.h), audited by
  // CUPTI's callbacks in short windows (tracer/glue/wrapper_audit.h).
  bool driver_wrappers = true;
};

struct SettingSpec {
  const char* env;      // "STREAMHAZ_FOOTPRINTS"
  const char* option;   // `streamhaz run`'s option ("--footprints"), or nullptr for none
  const char* values;   // what a value looks like, for --help ("api|pointer|static|exact")
  const char* help;     // one sentence
  // Parses `text` into `into`; on error returns why (the value quoted), else "".
  std::string (*parse)(std::string_view text, TracerSettings& into);
  // The current value as the table spells it (the defaults, in --help and warnings).
  std::string (*show)(const TracerSettings& s);
};

// Every setting, in the order --help lists them.
std::span<const SettingSpec> tracer_settings();

// Reads every setting with `lookup` (getenv in the tracer). An unset or empty variable keeps
// the default; a bad value keeps it too and adds one warning to `warnings`.
using EnvLookup = std::function<const char*(const char*)>;
TracerSettings read_tracer_settings(const EnvLookup& lookup, std::vector<std::string>& warnings);

// Whether `text` is a valid value of `spec`; the reason when not.
std::optional<std::string> setting_error(const SettingSpec& spec, std::string_view text);

}  // namespace streamhaz::tracer
