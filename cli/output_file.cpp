#include "output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
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

// The temporary files of live OutputFiles, for the signal handler: fixed storage, since a
// handler may not allocate. A path is stored before its slot is marked in use, and the mark
// is cleared only once the file is gone or renamed into place.
constexpr int kCleanupSlots = 8;
char cleanup_paths[kCleanupSlots][PATH_MAX];
volatile sig_atomic_t cleanup_in_use[kCleanupSlots];
std::mutex cleanup_mutex;  // between threads making outputs; the handler takes no lock

extern "C" void remove_temporaries_then_die(int sig) {
  for (int i = 0; i < kCleanupSlots; ++i)
    if (cleanup_in_use[i]) ::unlink(cleanup_paths[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // dies of the signal, as without the handler: the parent sees why
}

// Installed once, and only over the default action: a signal the caller ignores (nohup)
// stays ignored.
void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction act {};
      act.sa_handler = remove_temporaries_then_die;
      sigemptyset(&act.sa_mask);
      ::sigaction(sig, &act, nullptr);
    }
  });
}

int register_for_cleanup(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  install_cleanup_handlers();
  std::lock_guard lock(cleanup_mutex);
  for (int i = 0; i < kCleanupSlots; ++i) {
    if (cleanup_in_use[i]) continue;
    std::memcpy(cleanup_paths[i], path.c_str(), path.size() + 1);
    cleanup_in_use[i] = 1;
    return i;
  }
  return -1;
}

void unregister_for_cleanup(int slot) {
  if (slot < 0) return;
  std::lock_guard lock(cleanup_mutex);
  cleanup_in_use[slot] = 0;
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
    cleanup_slot_ = register_for_cleanup(temporary_);
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
  unregister_for_cleanup(cleanup_slot_);
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
  unregister_for_cleanup(cleanup_slot_);  // only now: the file is in place, nothing is left to remove
  cleanup_slot_ = -1;
}

}  // namespace streamhaz::cli
