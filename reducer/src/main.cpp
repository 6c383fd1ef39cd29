// streamhaz-reducer: the bundled ZeRO-2 overlapped step (see docs/reducer.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "launcher.hpp"
#include "nccl_bootstrap.hpp"
#include "options.hpp"
#include "run_rank.hpp"

namespace {

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "streamhaz-reducer: %s\n", message.c_str());
  std::exit(2);
}

bool is_supported_world_size(int n) { return n == 1 || n == 2 || n == 4 || n == 8; }

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  reducer::Options options = reducer::parse_options(args);

  std::optional<reducer::RankEnv> rank = reducer::rank_env_from_environment();
  if (!rank) {
    int nproc = options.nproc > 0 ? options.nproc : 1;
    if (!is_supported_world_size(nproc))
      usage_error("--nproc must be 1, 2, 4 or 8 (pre-division by the world size must be exact)");
    if (nproc > 1) {
      std::vector<std::string> child_argv(argv, argv + argc);
      return reducer::launch_ranks(nproc, child_argv, reducer::fresh_nccl_id_file_path());
    }
    rank = reducer::RankEnv{};
    if (options.nccl_id_file.empty()) options.nccl_id_file = reducer::fresh_nccl_id_file_path();
  }

  if (options.nproc > 0 && options.nproc != rank->world_size)
    usage_error("--nproc " + std::to_string(options.nproc) + " disagrees with WORLD_SIZE=" +
                std::to_string(rank->world_size));
  if (!is_supported_world_size(rank->world_size))
    usage_error("WORLD_SIZE must be 1, 2, 4 or 8 (pre-division by the world size must be exact)");
  if ((std::int64_t{options.layers} * options.layer_elems) % rank->world_size != 0)
    usage_error("--layers x --layer-elems must be divisible by the world size " +
                std::to_string(rank->world_size));
  return reducer::run_rank(options, *rank);
}
