// streamhaz: finds stream hazards in multi-GPU training traces.
#include <cstdio>
#include <exception>
#include <new>

#include "allocator.h"
#include "commands.h"
#include "streamhaz/trace/printable.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/version.h"

int main(int argc, char** argv) {
  using namespace streamhaz::cli;
  tune_allocator();
  CLI::App app{
      "streamhaz: finds stream hazards (unordered reads and writes of the same bytes on\n"
      "different CUDA streams) in traces of multi-GPU training runs."};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    return std::string("streamhaz ") + streamhaz::kVersion + " (allocator: " + allocator_in_use() + ")";
  });
  int exit_code = kExitClean;
  add_run_command(app, exit_code);
  add_check_command(app, exit_code);
  add_report_command(app, exit_code);
  add_inspect_command(app, exit_code);
  add_export_command(app, exit_code);
  add_kernels_command(app, exit_code);
  add_replay_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's messages quote the arguments: escaped like every other message.
    std::fprintf(stderr, "%s\nRun with --help for more information.\n",
                 streamhaz::trace::printable(e.what()).c_str());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    // Out of memory outside a trace's records (those say which file and record: OutOfMemory).
    std::fprintf(stderr, "streamhaz: out of memory\n");
    return kExitUsage;
  } catch (const std::exception& e) {
    // TraceError (file, byte offset, what) included: file names may hold anything.
    std::fprintf(stderr, "streamhaz: %s\n", streamhaz::trace::printable(e.what()).c_str());
    return kExitUsage;
  }
  return exit_code;
}
