// An output file given with -o (or --minimal-sync, --perfetto), written without surprises:
// - a new file is written beside its final name and renamed into place at commit(), so a run
//   that fails half-way leaves nothing; a file that appeared meanwhile is not overwritten;
// - an existing regular file is replaced only with --force, the same way (the old file stays
//   as it was until commit()); never one of the command's input files, --force or not;
// - a symbolic link is written through (the file it names is what gets replaced); a link to
//   nothing is refused, since writing through it would create a file wherever it points;
// - a stream (character device such as /dev/null, FIFO) is written directly, never replaced;
// - anything else (a folder, a block device, a socket) is refused;
// - SIGINT, SIGTERM or SIGHUP before commit() remove the file written beside the output.
// Made before the work whose result it holds: an output that cannot be written (a folder
// without write permission, an existing file) is refused before a long analysis, not after it.
#pragma once

#include <ext/stdio_filebuf.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace streamhaz::cli {

class OutputFile {
 public:
  // Throws std::runtime_error (what: a message for the user) when the path is refused.
  // `inputs`: the files the command reads (traces, side files), none of which it may replace.
  OutputFile(const std::string& path, bool force, const std::vector<std::string>& inputs = {});
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, and renames the temporary file into place. Throws std::runtime_error.
  void commit();

 private:
  std::string path_;       // where the user asked for it (symbolic links resolved)
  std::string temporary_;  // empty for a stream
  int cleanup_slot_ = -1;  // where the signal handler finds temporary_ (-1: not registered)
  bool replace_ = false;   // an existing regular file is replaced (--force)
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> buf_;
  std::ostream out_{nullptr};
};

}  // namespace streamhaz::cli
