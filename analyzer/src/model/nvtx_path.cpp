#include "streamhaz/analysis/nvtx_path.h"

namespace streamhaz::analysis {

std::string nvtx_path(const std::string& path) {
  std::string out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    const std::string segment = path.substr(start, slash - start);
    if (segment != "?") out += (out.empty() ? "" : "/") + segment;
    start = slash + 1;
  }
  return out;
}

}  // namespace streamhaz::analysis
