#include "streamhaz/trace/printable.h"

#include <cstdint>
#include <cstdio>

namespace streamhaz::trace {
namespace {

void escape_byte(std::string& out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

// The length of the well-formed UTF-8 sequence at the start of `s` (overlong forms,
// surrogates and code points above U+10FFFF are not), with its code point; 0 if none.
size_t utf8_sequence(std::string_view s, uint32_t& cp) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xc0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xc2 && c <= 0xdf && cont(1)) {
    cp = (c & 0x1fu) << 6 | (b(1) & 0x3fu);
    return 2;
  }
  if (c >= 0xe0 && c <= 0xef && cont(1) && cont(2)) {
    cp = (c & 0x0fu) << 12 | (b(1) & 0x3fu) << 6 | (b(2) & 0x3fu);
    if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4 && cont(1) && cont(2) && cont(3)) {
    cp = (c & 0x07u) << 18 | (b(1) & 0x3fu) << 12 | (b(2) & 0x3fu) << 6 | (b(3) & 0x3fu);
    if (cp < 0x10000 || cp > 0x10ffff) return 0;
    return 4;
  }
  return 0;
}

// C1 controls act on terminals; bidirectional overrides reorder what a reader sees.
bool hidden_effect(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      escape_byte(out, c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      uint32_t cp = 0;
      const size_t n = utf8_sequence(text.substr(i), cp);
      if (n == 0) {
        escape_byte(out, c);
        ++i;
      } else if (hidden_effect(cp)) {
        char buf[12];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
        out += buf;
        i += n;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
    }
  }
  return out;
}

}  // namespace streamhaz::trace
