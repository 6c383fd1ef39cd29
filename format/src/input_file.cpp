#include "streamhaz/trace/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "streamhaz/trace/reader.h"

namespace streamhaz::trace {

RegularFile open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer for ever. It is
  // refused below; for a regular file the flag changes nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw TraceError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw TraceError(path, 0, "not a regular file");
  }
  return {fd, static_cast<uint64_t>(st.st_size)};
}

std::string read_side_file(const std::string& path, uint64_t max_bytes) {
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } file{open_regular_file(path).fd};
  const auto too_big = [&] {
    return TraceError(path, 0, "larger than the " + std::to_string(max_bytes >> 20) + " MiB such a file may have");
  };
  // Read to the end rather than to the size fstat gave: the file may grow meanwhile.
  std::string text;
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (got > max_bytes) throw too_big();
      text.resize(std::min<uint64_t>(max_bytes + 1, std::max<size_t>(65536, 2 * got)));
    }
    const ssize_t n = ::read(file.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw TraceError(path, got, std::string("read error: ") + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) throw too_big();
  text.resize(got);
  return text;
}

}  // namespace streamhaz::trace
