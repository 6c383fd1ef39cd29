#include "nccl_bootstrap.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "cuda_check.hpp"

namespace reducer {
namespace {

std::string temp_dir() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

void write_id(const ncclUniqueId& id, const std::string& path) {
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(id.internal, sizeof(id.internal));
    if (!out) fail("cannot write the NCCL id file '" + temporary + "'");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    fail("cannot rename '" + temporary + "' to '" + path + "'");
}

ncclUniqueId wait_for_id(const std::string& path) {
  using namespace std::chrono;
  auto deadline = steady_clock::now() + seconds(120);
  ncclUniqueId id{};
  while (steady_clock::now() < deadline) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(id.internal, sizeof(id.internal))) return id;
    std::this_thread::sleep_for(milliseconds(5));
  }
  fail("no NCCL id appeared in '" + path + "' within 120 s (is rank 0 running?)");
}

}  // namespace

std::string nccl_id_file_path(const std::string& from_options) {
  if (!from_options.empty()) return from_options;
  if (const char* env = std::getenv("STREAMHAZ_NCCL_ID_FILE"); env && *env) return env;
  return temp_dir() + "/streamhaz-reducer-ncclid-" + std::to_string(getppid());
}

std::string fresh_nccl_id_file_path() {
  return temp_dir() + "/streamhaz-reducer-ncclid-" + std::to_string(getpid());
}

ncclComm_t init_communicator(int rank, int world_size, const std::string& id_file) {
  ncclUniqueId id{};
  if (rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    write_id(id, id_file);
  } else {
    id = wait_for_id(id_file);
  }
  ncclComm_t comm = nullptr;
  NCCL_CHECK(ncclCommInitRank(&comm, world_size, id, rank));
  // Init returns only after every rank has joined, so nobody needs the file any more; removing
  // it also keeps a later run from reading a stale id.
  if (rank == 0) std::remove(id_file.c_str());
  return comm;
}

}  // namespace reducer
