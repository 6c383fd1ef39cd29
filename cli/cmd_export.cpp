// `streamhaz export TRACE... --json`: every record as one JSON object per line;
// `--perfetto FILE`: the timeline for ui.perfetto.dev (perfetto_output.cpp).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "perfetto_output.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/record_json.h"

namespace streamhaz::cli {

namespace {

void export_records(const std::vector<std::string>& paths, std::ostream& out) {
  for (const std::string& path : paths) {
    trace::TraceReader reader(path);
    trace::Record r;
    while (reader.next(r)) {
      nlohmann::json j = trace::to_json(r);
      j["rank"] = reader.rank();
      // Names come from traces as bytes: invalid UTF-8 is replaced rather than aborting.
      out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
    if (reader.truncated()) std::cerr << "streamhaz export: warning: " << reader.truncation() << "\n";
  }
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("export", "Export trace records (JSON Lines) or the timeline (Perfetto JSON)");
  struct Options {
    std::vector<std::string> traces;
    bool json = false;
    std::string output;
    bool force = false;
    std::string perfetto;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("TRACE", o->traces, "Trace files or folders of per-rank .shz files")->required();
  auto* json = cmd->add_flag("--json", o->json, "JSON Lines: one object per record, with \"rank\" and \"type\"");
  cmd->add_option("--perfetto", o->perfetto,
                  "Write FILE: Chrome trace-event JSON for ui.perfetto.dev (tracks per rank and stream, NVTX ranges, "
                  "flows for event waits and NCCL matches, finding markers; docs/report.md)")
      ->type_name("FILE")
      ->excludes(json);
  cmd->add_option("-o,--output", o->output, "Write to this file instead of standard output");
  cmd->add_flag("--force", o->force, "Replace --output if it exists");
  cmd->footer("Exit status: 0, or 2 when a trace cannot be read or the output exists.");
  cmd->callback([o, &exit_code] {
    if (!o->perfetto.empty()) {
      if (!o->output.empty()) throw CLI::ValidationError("--perfetto FILE names its output; -o is for --json");
      exit_code = export_perfetto(trace::expand_trace_paths(o->traces), o->perfetto, o->force);
      return;
    }
    if (!o->json) throw CLI::RequiredError("--json or --perfetto");
    std::vector<std::string> paths = trace::expand_trace_paths(o->traces);
    if (o->output.empty()) {
      export_records(paths, std::cout);
    } else {
      if (std::filesystem::exists(o->output) && !o->force)
        throw std::runtime_error(o->output + " exists; pass --force to replace it");
      // Written beside the target and renamed at the end: a trace that fails half-way leaves
      // the old file as it was.
      std::string partial = o->output + ".partial";
      try {
        std::ofstream file(partial, std::ios::trunc);
        if (!file) throw std::runtime_error("cannot write " + partial);
        export_records(paths, file);
        file.close();
        if (!file) throw std::runtime_error("cannot write " + partial);
        std::filesystem::rename(partial, o->output);
      } catch (...) {
        std::error_code ec;
        std::filesystem::remove(partial, ec);
        throw;
      }
    }
    exit_code = kExitClean;
  });
}

}  // namespace streamhaz::cli
