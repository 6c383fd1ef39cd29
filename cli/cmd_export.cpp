// `streamhaz export TRACE... --json`: every record as one JSON object per line;
// `--perfetto FILE`: the timeline for ui.perfetto.dev (perfetto_output.cpp).
#include <iostream>
#include <optional>

#include "commands.h"
#include "messages.h"
#include "output_file.h"
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
      // The trace's rank (-1: none) under its own key: an NCCL record's "rank" is its
      // communicator rank, and must stay so.
      j["trace_rank"] = reader.rank();
      // Names come from traces as bytes: invalid UTF-8 is replaced rather than aborting.
      out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
    if (reader.truncated()) warning("export", reader.truncation());
    if (reader.strings_cut()) warning("export", reader.strings_cut_note());
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
  auto* json = cmd->add_flag("--json", o->json,
                             "JSON Lines: one object per record, with \"type\" and \"trace_rank\" (the trace's rank, -1 "
                             "for none)");
  cmd->add_option("--perfetto", o->perfetto,
                  "Write FILE: Chrome trace-event JSON for ui.perfetto.dev (tracks per rank and stream, NVTX ranges, "
                  "flows for event waits and NCCL matches, finding markers; docs/report.md)")
      ->type_name("FILE")
      ->excludes(json);
  cmd->add_option("-o,--output", o->output, "Write to this file instead of standard output (- for standard output)");
  cmd->add_flag("--force", o->force, "Replace --output (or the --perfetto file) if it exists (never an input)");
  cmd->footer(
      "-o PATH: a new file, or with --force an existing one (never an input trace), appears only once every\n"
      "trace was read; a symbolic link is written through, a FIFO or character device written to, anything\n"
      "else refused.\n"
      "Exit status: 0, or 2 when a trace cannot be read, the output exists (without --force), is refused,\n"
      "or cannot be written (standard output included).");
  cmd->callback([o, &exit_code] {
    if (!o->perfetto.empty()) {
      if (!o->output.empty()) throw CLI::ValidationError("--perfetto FILE names its output; -o is for --json");
      exit_code = export_perfetto(trace::expand_trace_paths(o->traces), o->perfetto, o->force);
      return;
    }
    if (!o->json) throw CLI::RequiredError("--json or --perfetto");
    std::vector<std::string> paths = trace::expand_trace_paths(o->traces);
    if (o->output.empty() || o->output == "-") {
      export_records(paths, std::cout);
      exit_code = stdout_written("export") ? kExitClean : kExitUsage;
      return;
    }
    // Refused (and nothing created) before any trace is read; the file appears only at commit.
    std::optional<OutputFile> file;
    try {
      file.emplace(o->output, o->force, paths);
    } catch (const std::runtime_error& e) {
      exit_code = usage_error("export", e.what());
      return;
    }
    export_records(paths, file->stream());  // a bad trace throws TraceError: main() says so
    try {
      file->commit();
      exit_code = kExitClean;
    } catch (const std::runtime_error& e) {
      exit_code = usage_error("export", e.what());
    }
  });
}

}  // namespace streamhaz::cli
