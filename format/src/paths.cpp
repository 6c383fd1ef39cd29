// expand_trace_paths: the TRACE arguments of the command line.
#include <algorithm>
#include <filesystem>

#include "streamhaz/trace/reader.h"

namespace streamhaz::trace {

std::vector<std::string> expand_trace_paths(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> found;
      fs::directory_iterator entries(arg, ec);
      if (ec) throw TraceError(arg, 0, "cannot read folder: " + ec.message());
      for (const auto& entry : entries) {
        if (entry.path().extension() != ".shz") continue;
        // A rank's trace that is a FIFO, a folder or a broken link would drop that rank from
        // the check without a word: refuse it instead.
        if (!entry.is_regular_file(ec)) throw TraceError(entry.path().string(), 0, "not a regular file");
        found.push_back(entry.path().string());
      }
      if (found.empty()) throw TraceError(arg, 0, "folder holds no .shz trace files");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(arg, ec)) {
      out.push_back(arg);
    } else {
      throw TraceError(arg, 0, "no such file or folder");
    }
  }
  return out;
}

}  // namespace streamhaz::trace
