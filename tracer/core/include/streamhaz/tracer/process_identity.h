// Who this process is in a distributed job (from the launcher's environment) and what its
// trace file is called: one file per process, named by rank, else by pid.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace streamhaz::tracer {

struct ProcessIdentity {
  int rank = -1;        // -1: no launcher variable set
  int world_size = -1;
  int local_rank = -1;
  int pid = 0;
  std::string host;
  std::vector<std::string> command;
};

using EnvLookup = std::function<const char*(const char*)>;

// Reads RANK/WORLD_SIZE/LOCAL_RANK (torchrun, DeepSpeed), then OMPI_COMM_WORLD_*, PMI_*,
// then SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID.
ProcessIdentity read_process_identity(const EnvLookup& env, int pid, std::string host,
                                      std::vector<std::string> command);
// The same for this process (getenv, getpid, gethostname, /proc/self/cmdline).
ProcessIdentity this_process_identity();

// "rank3.shz", or "pid12345.shz" when no rank is known.
std::string trace_file_name(const ProcessIdentity& who);
// Used when the preferred name is taken (two processes claiming one rank): "rank3.12345.shz".
std::string fallback_trace_file_name(const ProcessIdentity& who);

// The header fields the core knows; the glue adds devices and CUDA versions.
nlohmann::json base_header(const ProcessIdentity& who, const std::string& footprints);

}  // namespace streamhaz::tracer
