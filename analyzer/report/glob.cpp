#include "streamhaz/report/glob.h"

#include <optional>

namespace streamhaz::report {

// Greedy matching with one backtrack point (the last *): linear enough for names of a few
// hundred characters and never recursive, so no pattern can blow the stack.
bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  std::optional<size_t> star_p;  // pattern position after the last *
  size_t star_t = 0;             // text position that * is currently extended to
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = ++p;
      star_t = t;
      continue;
    }
    if (p < pattern.size()) {
      char want = pattern[p];
      size_t width = 1;
      bool any = want == '?';
      if (want == '\\' && p + 1 < pattern.size()) {
        want = pattern[p + 1];
        width = 2;
        any = false;
      }
      if (any || want == text[t]) {
        p += width;
        ++t;
        continue;
      }
    }
    if (!star_p) return false;
    p = *star_p;  // let the last * swallow one more character
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace streamhaz::report
