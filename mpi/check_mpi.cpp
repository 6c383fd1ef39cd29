// streamhaz-check-mpi: `streamhaz check --no-sync` for traces of thousands of ranks, sharded
// over MPI processes (mpirun -np N streamhaz-check-mpi TRACE...). Process 0 writes the one
// merged report, the same as the single-process check's; the exit status is check's: 0 clean,
// 1 races or a truncated trace, 2 bad input (any process's). Irregular collective input (a call
// posted again after it completed) stops every process with one error and status 2.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <sstream>

#include "mpi_exchange.h"
#include "output_file.h"
#include "streamhaz/analysis/attribution.h"
#include "streamhaz/analysis/sharded.h"
#include "streamhaz/report/json_report.h"
#include "streamhaz/report/sarif_report.h"
#include "streamhaz/report/text_report.h"
#include "streamhaz/trace/printable.h"
#include "streamhaz/trace/reader.h"

using namespace streamhaz;

namespace {

constexpr int kExitClean = 0, kExitFindings = 1, kExitUsage = 2;

struct Options {
  std::vector<std::string> traces;
  std::string format = "text";
  std::string output;
  bool force = false;
  std::string kernels;
  bool per_thread_host = false;
};

bool writes_to_stdout(const Options& o) { return o.output.empty() || o.output == "-"; }

// One line on stderr, escaped like every streamhaz message (file names may hold anything).
void say(const std::string& what) { std::cerr << "streamhaz-check-mpi: " << trace::printable(what) << "\n"; }

// Process 0 writes the report (into `file`, made before the analysis, unless to standard
// output); returns the exit status.
int write_report(const Options& o, report::ReportInput& input, cli::OutputFile* file) {
  std::ostringstream out;
  if (o.format == "json") report::write_json_report(out, input);
  else if (o.format == "sarif") report::write_sarif_report(out, input);
  else report::write_text_report(out, input);
  const std::string text = out.str();
  if (!file) {
    std::cout << text << std::flush;
  } else {
    try {
      file->stream() << text;
      file->commit();
    } catch (const std::runtime_error& e) {
      say(e.what());
      return kExitUsage;
    }
  }
  if (o.format != "text" || !writes_to_stdout(o)) {
    for (const std::string& w : input.analysis.warnings) say("warning: " + w);
    std::cerr << report::summary_line(input) << "\n";
  }
  for (const auto& f : input.analysis.findings)
    if (f.kind == analysis::FindingKind::Race) return kExitFindings;
  for (const auto& t : input.analysis.traces)
    if (t.truncated) return kExitFindings;
  return kExitClean;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);

  CLI::App app{"Find stream hazards in traces of many ranks, sharded over MPI processes (mpirun -np N ...). "
               "The report is `streamhaz check --no-sync`'s, written by process 0"};
  Options o;
  app.add_option("traces", o.traces, "Trace files, or folders of per-rank *.shz files")->type_name("TRACE")->required();
  app.add_option("-f,--format", o.format, "Report format: text, json or sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}))
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "Write the report to FILE instead of standard output")->type_name("FILE");
  app.add_flag("--force", o.force, "Replace the --output file if it exists (never an input)");
  app.add_option("--kernels", o.kernels, "kernels.json from `streamhaz kernels scan` (static footprints)")
      ->type_name("FILE");
  app.add_flag("--per-thread-host", o.per_thread_host, "One clock per host thread instead of one per process");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = me == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : kExitUsage);
    MPI_Finalize();
    return rc == 0 ? 0 : kExitUsage;
  }
  int status = kExitClean;
  try {
    const std::vector<std::string> files = trace::expand_trace_paths(o.traces);
    // Process 0's output is made before the analysis, as check's: refused now, not after it.
    std::optional<cli::OutputFile> file;
    if (me == 0 && !writes_to_stdout(o)) {
      std::vector<std::string> inputs = files;
      if (!o.kernels.empty()) inputs.push_back(o.kernels);
      file.emplace(o.output, o.force, inputs);
    }
    analysis::AnalysisOptions options;
    options.kernels = o.kernels;
    options.per_thread_host = o.per_thread_host;
    mpi::MpiExchange exchange;
    report::ReportInput input;
    input.analysis = analysis::analyze_shard(files, options, exchange);
    if (me == 0) {
      // Stacks, allocation sites and stream origins, read back from the traces as check does.
      analysis::attach_stacks(input.analysis);
      status = write_report(o, input, file ? &*file : nullptr);
    }
  } catch (const analysis::IrregularCollectives& e) {
    // Every process stopped in the same round: one message, and an orderly end.
    if (me == 0) say(e.what());
    status = kExitUsage;
  } catch (const std::exception& e) {
    // Bad input on one process (or process 0's output refused): the others wait in a
    // collective, so end them all.
    say(e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitUsage);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
