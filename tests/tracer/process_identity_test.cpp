#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "streamhaz/trace/records.h"
#include "streamhaz/tracer/process_identity.h"
#include "streamhaz/version.h"

using namespace streamhaz::tracer;

namespace {
EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("torchrun's variables name the file by rank") {
  auto who = read_process_identity(env_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}}), 100, "h", {});
  CHECK(who.rank == 3);
  CHECK(who.world_size == 4);
  CHECK(who.local_rank == 1);
  CHECK(trace_file_name(who) == "rank3.shz");
  CHECK(fallback_trace_file_name(who) == "rank3.100.shz");
}

TEST_CASE("Open MPI and SLURM variables are used when RANK is absent") {
  auto ompi = read_process_identity(env_of({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                                            {"SLURM_PROCID", "0"}}),
                                    1, "h", {});
  CHECK(ompi.rank == 5);
  CHECK(ompi.world_size == 8);
  auto slurm = read_process_identity(env_of({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}}),
                                     1, "h", {});
  CHECK(slurm.rank == 2);
  CHECK(slurm.local_rank == 0);
}

TEST_CASE("no launcher: the file is named by pid; junk values are ignored") {
  auto who = read_process_identity(env_of({{"RANK", "x1"}}), 4242, "h", {});
  CHECK(who.rank == -1);
  CHECK(trace_file_name(who) == "pid4242.shz");
}

TEST_CASE("the header has the fields the reader expects") {
  auto who = read_process_identity(env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}}), 7, "node1", {"python3", "train.py"});
  auto h = base_header(who, "api");
  CHECK(h["format"] == "streamhaz-trace");
  CHECK(h["version"] == streamhaz::trace::kFormatVersion);
  CHECK(h["tracer_version"] == streamhaz::kVersion);
  CHECK(h["rank"] == 1);
  CHECK(h["world_size"] == 2);
  CHECK(h["pid"] == 7);
  CHECK(h["command"][1] == "train.py");
  CHECK(h["clock"] == "cupti");
  CHECK(h["footprints"] == "api");
}
