#include "launcher.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace reducer {
namespace {

[[noreturn]] void env_error(const std::string& message) {
  std::fprintf(stderr, "streamhaz-reducer: %s\n", message.c_str());
  std::exit(2);
}

std::optional<int> env_int(const char* name) {
  const char* text = std::getenv(name);
  if (!text) return std::nullopt;
  std::string_view view(text);
  int value = 0;
  auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc{} || end != view.data() + view.size() || value < 0)
    env_error(std::string("environment variable ") + name + "='" + text +
              "' is not a non-negative integer");
  return value;
}

}  // namespace

std::optional<RankEnv> rank_env_from_environment() {
  auto rank = env_int("RANK");
  if (!rank) return std::nullopt;
  RankEnv env;
  env.rank = *rank;
  env.world_size = env_int("WORLD_SIZE").value_or(1);
  env.local_rank = env_int("LOCAL_RANK").value_or(env.rank);
  if (env.world_size < 1 || env.rank >= env.world_size)
    env_error("RANK=" + std::to_string(env.rank) + " is not below WORLD_SIZE=" +
              std::to_string(env.world_size));
  return env;
}

int launch_ranks(int nproc, const std::vector<std::string>& argv, const std::string& id_file) {
  std::vector<pid_t> children;
  for (int rank = 0; rank < nproc; ++rank) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("streamhaz-reducer: fork");
      for (pid_t child : children) kill(child, SIGTERM);
      return 1;
    }
    if (pid == 0) {
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("STREAMHAZ_NCCL_ID_FILE", id_file.c_str(), 1);
      std::vector<char*> child_argv;
      for (const auto& arg : argv) child_argv.push_back(const_cast<char*>(arg.c_str()));
      child_argv.push_back(nullptr);
      execv("/proc/self/exe", child_argv.data());
      std::perror("streamhaz-reducer: exec");
      _exit(127);
    }
    children.push_back(pid);
  }

  int result = 0;
  for (std::size_t remaining = children.size(); remaining > 0; --remaining) {
    int status = 0;
    pid_t done = wait(&status);
    if (done < 0) break;
    std::erase(children, done);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && result == 0) result = code;
    // Exit 1 is a finished run that found corruption under --expect-clean; anything else
    // is a rank that died and leaves the others blocked in NCCL: stop them.
    if (code > 1)
      for (pid_t child : children) kill(child, SIGTERM);
  }
  return result;
}

}  // namespace reducer
