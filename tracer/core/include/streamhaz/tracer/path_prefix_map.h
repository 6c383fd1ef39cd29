#pragma once
// Rewrites the start of source and module paths as they enter a trace, like the compilers'
// -ffile-prefix-map: `STREAMHAZ_PATH_PREFIX_MAP=/home/me/project/=` makes
// /home/me/project/train.py read train.py, so a trace names no folder of the machine it was
// taken on (bundled or shared traces) and `check --source-root` finds the files elsewhere.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace streamhaz::tracer {

class PathPrefixMap {
 public:
  // "OLD=NEW" entries separated by ';' (a path holds no ';' in practice; '=' splits at the
  // last one, so OLD may hold '='). Returns why the text is malformed, or "" (then `into` holds it).
  static std::string parse(std::string_view text, PathPrefixMap& into);

  // `path` with the first entry whose OLD starts it replaced by its NEW; unchanged otherwise.
  std::string apply(std::string_view path) const;

  bool empty() const { return entries_.empty(); }
  // The entries as parse() reads them back.
  std::string describe() const;

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

}  // namespace streamhaz::tracer
