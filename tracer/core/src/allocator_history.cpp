#include "streamhaz/tracer/allocator_history.h"

#include <charconv>

namespace streamhaz::tracer {
namespace {

// Splits off the text up to `sep` (all of it when absent).
std::string_view take(std::string_view& rest, char sep) {
  const size_t at = rest.find(sep);
  std::string_view field = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view{} : rest.substr(at + 1);
  return field;
}

template <class T> bool number(std::string_view text, T& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::variant<std::vector<HistoryAllocation>, std::string> parse_allocator_history(std::string_view text) {
  std::vector<HistoryAllocation> out;
  size_t line_no = 0;
  auto bad = [&](const char* why) { return "allocator history line " + std::to_string(line_no) + ": " + why; };
  while (!text.empty()) {
    std::string_view line = take(text, '\n');
    ++line_no;
    if (line_no == 1) {
      if (line != kAllocatorHistoryMagic) return bad("not a streamhaz allocator history (or another version)");
      continue;
    }
    if (line.empty()) continue;
    if (line.starts_with("alloc ")) {
      std::string_view rest = line.substr(6);
      HistoryAllocation a;
      if (!number(take(rest, ' '), a.device) || !number(take(rest, ' '), a.ptr) || !number(take(rest, ' '), a.bytes) ||
          !number(take(rest, ' '), a.stream) || !number(take(rest, ' '), a.unix_us) || !rest.empty())
        return bad("expected alloc DEVICE ADDRESS BYTES STREAM UNIX_US");
      out.push_back(std::move(a));
    } else if (line.starts_with("frame\t")) {
      if (out.empty()) return bad("a frame before any alloc");
      std::string_view rest = line.substr(6);
      PythonFrameInfo f;
      if (!number(take(rest, '\t'), f.line)) return bad("expected frame<TAB>LINE<TAB>FUNCTION<TAB>FILE");
      f.function = std::string(take(rest, '\t'));
      f.file = std::string(rest);
      out.back().frames.push_back(std::move(f));
    } else {
      return bad("expected an alloc or frame line");
    }
  }
  if (line_no == 0) return std::string("allocator history: empty");
  return out;
}

}  // namespace streamhaz::tracer
