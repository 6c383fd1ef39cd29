#include "streamhaz/tracer/path_prefix_map.h"

namespace streamhaz::tracer {

std::string PathPrefixMap::parse(std::string_view text, PathPrefixMap& into) {
  PathPrefixMap map;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(';', pos), text.size());
    const std::string_view entry = text.substr(pos, end - pos);
    pos = end + 1;
    if (entry.empty()) continue;  // "a=b;" and ";;" are fine
    const size_t eq = entry.rfind('=');
    if (eq == std::string_view::npos || eq == 0)
      return "expected OLD=NEW entries separated by ';' (OLD not empty), got '" + std::string(entry) + "'";
    map.entries_.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  into = std::move(map);
  return {};
}

std::string PathPrefixMap::apply(std::string_view path) const {
  for (const auto& [from, to] : entries_)
    if (path.starts_with(from)) return to + std::string(path.substr(from.size()));
  return std::string(path);
}

std::string PathPrefixMap::describe() const {
  std::string out;
  for (const auto& [from, to] : entries_) out += (out.empty() ? "" : ";") + from + "=" + to;
  return out;
}

}  // namespace streamhaz::tracer
