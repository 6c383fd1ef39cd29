#include "new_output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace streamhaz::cli {

std::string refuse_existing(const std::string& path, bool force) {
  std::error_code ec;
  if (!force && std::filesystem::exists(path, ec)) return path + " already exists; use --force to overwrite it";
  return {};
}

void write_new_file(const std::string& path, bool force, const std::function<void(std::ostream&)>& write) {
  if (std::string why = refuse_existing(path, force); !why.empty()) throw std::runtime_error(why);
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  ::close(fd);
  try {
    {
      std::ofstream file(temp, std::ios::binary | std::ios::trunc);
      if (file) write(file);
      file.close();
      if (!file) throw std::runtime_error("cannot write " + temp);
    }
    // mkstemp makes the file private; give it the mode a plain create would have.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::chmod(temp.c_str(), 0666 & ~mask);
    if (force) {
      std::filesystem::rename(temp, path);
    } else {
      // link() fails if the name was taken meanwhile: a file that appeared is still kept.
      if (::link(temp.c_str(), path.c_str()) != 0)
        throw std::runtime_error(errno == EEXIST ? path + " already exists; use --force to overwrite it"
                                                 : "cannot write " + path + ": " + std::strerror(errno));
      std::filesystem::remove(temp);
    }
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temp, ec);
    throw;
  }
}

}  // namespace streamhaz::cli
