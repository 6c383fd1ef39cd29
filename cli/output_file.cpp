#include "output_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace streamhaz::cli {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& what) { throw std::runtime_error(what); }

std::string errno_text() { return std::strerror(errno); }

mode_t default_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// Refuses `path` (which exists, as `st` after following links) if it is one of `inputs`: the
// same file by device and inode, whatever name, link or folder led to it.
void refuse_inputs(const std::string& path, const struct stat& st, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
      refuse(path + " is " + (input == path ? "an input of this command" : "the input " + input) +
             "; refusing to write over it");
  }
}

}  // namespace

OutputFile::OutputFile(const std::string& path, bool force, const std::vector<std::string>& inputs) : path_(path) {
  struct stat st {};
  bool exists = true;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse("cannot write " + path + ": " + errno_text());
    exists = false;
  } else if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) != 0)
      refuse(path + " is a symbolic link to nothing (" + errno_text() + "); give the path of the file itself");
    std::error_code ec;
    path_ = fs::canonical(path, ec).string();
    if (ec) refuse("cannot resolve " + path + ": " + ec.message());
  }
  if (exists) refuse_inputs(path, st, inputs);
  int fd = -1;
  mode_t mode = default_file_mode();
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    fd = ::open(path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) refuse("cannot write " + path + ": " + errno_text());
  } else if (!exists || S_ISREG(st.st_mode)) {
    if (exists && !force) refuse(path + " exists; pass --force to replace it");
    replace_ = exists;
    if (replace_) mode = st.st_mode & 07777;
    const fs::path target(path_);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string name = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) refuse("cannot write beside " + path + ": " + errno_text());
    temporary_ = name;
    ::fchmod(fd, mode);
  } else {
    refuse(path + " is not a regular file, a FIFO or a character device; refusing to replace it");
  }
  buf_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd, std::ios::out);
  out_.rdbuf(buf_.get());
}

OutputFile::~OutputFile() {
  buf_.reset();  // closes the descriptor
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void OutputFile::commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  const int fd = buf_->fd();
  const bool synced = temporary_.empty() || ::fsync(fd) == 0 || errno == EINVAL;
  const bool closed = buf_->close() != nullptr;
  if (!written || !synced || !closed) refuse("cannot write " + path_ + ": " + errno_text());
  if (temporary_.empty()) return;
  // Without --force the file must still not exist: RENAME_NOREPLACE fails if one appeared.
  int r = replace_ ? ::rename(temporary_.c_str(), path_.c_str())
                   : ::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
  if (r != 0 && !replace_ && errno == EINVAL) {
    // A file system without RENAME_NOREPLACE: link() also fails when the name exists.
    r = ::link(temporary_.c_str(), path_.c_str());
    if (r == 0) ::unlink(temporary_.c_str());
  }
  if (r != 0) {
    if (errno == EEXIST) refuse(path_ + " appeared while it was written; pass --force to replace it");
    refuse("cannot rename the output into place as " + path_ + ": " + errno_text());
  }
  temporary_.clear();
}

}  // namespace streamhaz::cli
