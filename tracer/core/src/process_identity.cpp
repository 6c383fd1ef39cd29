#include "streamhaz/tracer/process_identity.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "streamhaz/trace/records.h"
#include "streamhaz/version.h"

namespace streamhaz::tracer {
namespace {

int first_int(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* v = env(name);
    if (!v || !*v) continue;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (end && *end == '\0' && n >= 0 && n < (1 << 30)) return static_cast<int>(n);
  }
  return -1;
}

}  // namespace

ProcessIdentity read_process_identity(const EnvLookup& env, int pid, std::string host,
                                      std::vector<std::string> command) {
  ProcessIdentity who;
  who.rank = first_int(env, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"});
  who.world_size = first_int(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  who.local_rank = first_int(env, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  who.pid = pid;
  who.host = std::move(host);
  who.command = std::move(command);
  return who;
}

ProcessIdentity this_process_identity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::vector<std::string> command;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    command.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return read_process_identity([](const char* n) { return std::getenv(n); }, static_cast<int>(getpid()), host,
                               std::move(command));
}

std::string trace_file_name(const ProcessIdentity& who) {
  char name[64];
  if (who.rank >= 0) {
    std::snprintf(name, sizeof name, "rank%d.shz", who.rank);
  } else {
    std::snprintf(name, sizeof name, "pid%d.shz", who.pid);
  }
  return name;
}

std::string fallback_trace_file_name(const ProcessIdentity& who) {
  char name[64];
  if (who.rank >= 0) {
    std::snprintf(name, sizeof name, "rank%d.%d.shz", who.rank, who.pid);
  } else {
    std::snprintf(name, sizeof name, "pid%d.%d.shz", who.pid, 1);
  }
  return name;
}

nlohmann::json base_header(const ProcessIdentity& who, const std::string& footprints) {
  nlohmann::json h;
  h["format"] = "streamhaz-trace";
  h["version"] = trace::kFormatVersion;
  h["tracer_version"] = kVersion;
  h["host"] = who.host;
  h["pid"] = who.pid;
  h["rank"] = who.rank;
  if (who.world_size > 0) h["world_size"] = who.world_size;
  if (who.local_rank >= 0) h["local_rank"] = who.local_rank;
  h["command"] = who.command;
  h["clock"] = "cupti";
  h["footprints"] = footprints;
  return h;
}

}  // namespace streamhaz::tracer
