// `streamhaz run -- CMD...`: runs a program with the tracer injected into every CUDA process
// it starts (children inherit the environment), and passes the program's exit status through.
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "messages.h"
#include "streamhaz/tracer/settings.h"

namespace streamhaz::cli {
namespace {

namespace fs = std::filesystem;

// The tracer library sits next to the command (build tree: bin/ and lib/ side by side;
// installed: bin/ and lib/ under one prefix). STREAMHAZ_TRACER_LIB overrides.
std::string find_tracer_library() {
  if (const char* env = std::getenv("STREAMHAZ_TRACER_LIB")) return env;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  fs::path dir = fs::path(self).parent_path();
  for (const fs::path& candidate : {dir / "../lib/libstreamhaz-tracer.so", dir / "libstreamhaz-tracer.so"}) {
    std::error_code ec;
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return {};
}

void prepend_env_list(const char* name, const std::string& item, char separator) {
  const char* old = std::getenv(name);
  std::string value = item;
  if (old && *old) value += separator + std::string(old);
  setenv(name, value.c_str(), 1);
}

// Creates the output folder. Traces of an earlier run there would be analysed as ranks of
// this one, so they are replaced only with --force; without it the run is refused.
bool prepare_out_dir(const std::string& out_dir, bool force) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    usage_error("run", "cannot create output folder " + out_dir + ": " + ec.message());
    return false;
  }
  std::vector<fs::path> old;
  for (const auto& entry : fs::directory_iterator(out_dir, ec))
    if (entry.is_regular_file(ec) && entry.path().extension() == ".shz") old.push_back(entry.path());
  if (old.empty()) return true;
  if (!force) {
    usage_error("run", out_dir + " already holds " + std::to_string(old.size()) +
                           " trace file(s) of an earlier run; pass --force to replace them, or choose another --out");
    return false;
  }
  for (const fs::path& p : old) fs::remove(p, ec);
  warning("run", "removed " + std::to_string(old.size()) + " trace file(s) of an earlier run from " + out_dir);
  return true;
}

// Runs argv and returns its exit status (128+N when killed by signal N).
int spawn_and_wait(const std::vector<std::string>& command) {
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "streamhaz run: fork failed: %s\n", std::strerror(errno));
    return kExitUsage;
  }
  if (child == 0) {
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    usage_error("run", std::string("cannot run ") + argv[0] + ": " + std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return kExitUsage;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitUsage;
}

// `streamhaz check DIR` with this very binary, in an environment without the tracer.
int check_traces(const std::string& out_dir) {
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("NVTX_INJECTION64_PATH");
  unsetenv("LD_PRELOAD");
  std::error_code ec;
  if (!fs::exists(out_dir, ec) || fs::is_empty(out_dir, ec)) {
    return usage_error("run", "no trace was written to " + out_dir + " (did the program use CUDA?)");
  }
  return spawn_and_wait({"/proc/self/exe", "check", out_dir});
}

// The tracer's Python side (tracer/python/sitecustomize.py) goes first on PYTHONPATH where a
// setting needs it: the allocator history is switched on from inside the Python process.
bool add_python_side(const std::string& tracer) {
  std::vector<std::string> ignored;
  const tracer::TracerSettings s = tracer::read_tracer_settings([](const char* name) { return std::getenv(name); }, ignored);
  if (!s.allocator_history || s.disabled) return true;
  const fs::path dir = fs::path(tracer).parent_path() / "streamhaz-python";
  std::error_code ec;
  if (!fs::exists(dir / "sitecustomize.py", ec)) {
    usage_error("run", "--allocator-history needs the tracer's Python side, " + (dir / "sitecustomize.py").string() +
                           ", next to the tracer library; it is missing");
    return false;
  }
  prepend_env_list("PYTHONPATH", dir.string(), ':');
  return true;
}

struct RunOptions {
  // Tracer settings given as options, by variable name (tracer_settings()); one not given is
  // left to the environment, else the tracer's default. --out always applies.
  std::map<std::string, std::string> settings;
  bool check = false;
  bool force = false;
  std::vector<std::string> command;
};

constexpr const char* kOutDirVariable = "STREAMHAZ_OUT_DIR";

// A setting without an option, for the footer: "  STREAMHAZ_DISABLE=1|0: help (default 0)".
std::string fmt_setting_line(const tracer::SettingSpec& spec, const std::string& default_value) {
  return std::string("  ") + spec.env + "=" + spec.values + ": " + spec.help + " (default " + default_value + ")\n";
}

int run_traced(const RunOptions& o) {
  const std::string out_dir =
      o.settings.count(kOutDirVariable) ? o.settings.at(kOutDirVariable) : tracer::TracerSettings{}.out_dir;
  const std::vector<std::string>& command = o.command;
  const bool check = o.check;
  // Usage errors first: a folder holding traces of an earlier run stays as it is unless asked.
  // The tracer would only warn about a bad value inherited from the environment.
  for (const tracer::SettingSpec& spec : tracer::tracer_settings()) {
    const char* env = std::getenv(spec.env);
    if (o.settings.count(spec.env) || !env || !*env) continue;
    if (auto why = tracer::setting_error(spec, env)) return usage_error("run", std::string(spec.env) + ": " + *why);
  }
  if (!prepare_out_dir(out_dir, o.force)) return kExitUsage;
  std::string tracer = find_tracer_library();
  if (tracer.empty())
    return usage_error("run",
                       "tracer library libstreamhaz-tracer.so not found next to this command (built only where "
                       "CUDA, CUPTI and NCCL are found); set STREAMHAZ_TRACER_LIB");
  // The tracer needs the CUDA driver library; preloading it where there is none would stop
  // every process from starting. Then run the program untraced.
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    dlclose(driver);
  } else {
    warning("run", "no CUDA driver (libcuda.so.1) here; running the program untraced");
    int status = spawn_and_wait(command);
    return check ? (status != 0 ? status : kExitUsage) : status;
  }
  // Children inherit the environment, so every process the command starts is traced.
  setenv("CUDA_INJECTION64_PATH", tracer.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", tracer.c_str(), 1);
  prepend_env_list("LD_PRELOAD", tracer, ':');
  for (const auto& [variable, value] : o.settings) setenv(variable.c_str(), value.c_str(), 1);
  setenv(kOutDirVariable, fs::absolute(out_dir).c_str(), 1);
  if (!add_python_side(tracer)) return kExitUsage;
  int status = spawn_and_wait(command);
  if (!check) return status;
  int verdict = check_traces(out_dir);
  // The program's failure comes first; else the analysis decides (0 clean, 1 findings).
  return status != 0 ? status : verdict;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Run a program under the tracer; one trace file per CUDA process");
  auto opts = std::make_shared<RunOptions>();
  // The tracer's settings table gives the options, their help and their validation.
  const tracer::TracerSettings defaults;
  std::string environment_only;
  for (const tracer::SettingSpec& spec : tracer::tracer_settings()) {
    const std::string fallback = std::string(spec.env) == kOutDirVariable ? "" : std::string("; else ") + spec.env;
    if (!spec.option) {
      environment_only += fmt_setting_line(spec, spec.show(defaults));
      continue;
    }
    cmd->add_option_function<std::string>(
           spec.option, [opts, env = std::string(spec.env)](const std::string& v) { opts->settings[env] = v; },
           std::string(spec.help) + " (default " + spec.show(defaults) + fallback + ")")
        ->type_name(spec.values)
        ->check([&spec](const std::string& v) { return tracer::setting_error(spec, v).value_or(""); });
  }
  cmd->add_flag("--check", opts->check, "After the program ends, run `streamhaz check` on the trace folder");
  cmd->add_flag("--force", opts->force, "Replace trace files an earlier run left in --out");
  cmd->add_option("command", opts->command, "The program and its arguments, after --")->required();
  cmd->footer("Example: streamhaz run --out traces/ -- torchrun --nproc_per_node 2 train.py\n"
              "Environment, read by the tracer in every process (an option above sets its variable):\n" +
              environment_only +
              "Exit status: the program's own (128+N when it dies of signal N), 2 when the tracer is missing,\n"
              "a setting (option or inherited variable) is bad, or --out holds traces of an earlier run\n"
              "(without --force); with --check and a program that succeeded, check's (0 clean, 1 findings,\n"
              "2 unreadable).");
  cmd->callback([opts, &exit_code] {
    exit_code = run_traced(*opts);
  });
}

}  // namespace streamhaz::cli
