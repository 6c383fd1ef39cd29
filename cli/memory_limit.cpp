#include "memory_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace streamhaz::cli {

void limit_memory(uint64_t mib) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_DATA, &limit) != 0)
    throw std::runtime_error(std::string("cannot read the memory limit: ") + std::strerror(errno));
  const rlim_t wanted = static_cast<rlim_t>(mib) << 20;
  if (limit.rlim_max != RLIM_INFINITY && wanted > limit.rlim_max)
    throw std::runtime_error("--memory-limit " + std::to_string(mib) + " MiB is above this process's hard limit of " +
                             std::to_string(limit.rlim_max >> 20) + " MiB");
  limit.rlim_cur = wanted;
  if (::setrlimit(RLIMIT_DATA, &limit) != 0)
    throw std::runtime_error(std::string("cannot set the memory limit: ") + std::strerror(errno));
}

}  // namespace streamhaz::cli
