#include "streamhaz/analysis/kernel_signature.h"

#include <cctype>

namespace streamhaz::analysis {

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)::";

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string drop_anonymous(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Index of the bracket opening the group that closes at `close`, or npos.
size_t matching_open(std::string_view s, size_t close, char open_ch, char close_ch) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (s[i] == close_ch) ++depth;
    if (s[i] == open_ch && --depth == 0) return i;
  }
  return std::string_view::npos;
}

}  // namespace

std::string normalise_types(std::string_view types) {
  std::string in = drop_anonymous(types);
  std::string out;
  out.reserve(in.size());
  bool pending_space = false;
  for (char c : in) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty() && ident_char(out.back()) && ident_char(c)) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

size_t count_params(std::string_view params) {
  if (params.empty() || params == "void") return 0;
  size_t count = 1;
  int depth = 0;
  for (char c : params) {
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) ++count;
  }
  return count;
}

std::optional<FunctionName> split_function_name(std::string_view demangled) {
  std::string s = drop_anonymous(demangled);
  // A cv-qualified member ("... ) const") cannot be a kernel; the list must end the name.
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.empty() || s.back() != ')') return std::nullopt;
  size_t open = matching_open(s, s.size() - 1, '(', ')');
  if (open == std::string::npos || open == 0) return std::nullopt;
  FunctionName name;
  name.params = normalise_types(std::string_view(s).substr(open + 1, s.size() - open - 2));
  std::string_view head = std::string_view(s).substr(0, open);
  if (!head.empty() && head.back() == '>') {
    size_t lt = matching_open(head, head.size() - 1, '<', '>');
    if (lt == std::string_view::npos) return std::nullopt;
    head = head.substr(0, lt);
    name.templated = true;
  }
  // A template's demangled name starts with its return type: the name is the last word at
  // bracket depth 0.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    char c = head[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ' ' && depth == 0) start = i + 1;
  }
  name.qualified = std::string(head.substr(start));
  if (name.qualified.empty()) return std::nullopt;
  return name;
}

std::optional<std::string> parameter_list(std::string_view demangled) {
  std::string_view s = demangled;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty() || s.back() != ')') return std::nullopt;
  size_t open = matching_open(s, s.size() - 1, '(', ')');
  if (open == std::string_view::npos) return std::nullopt;
  return std::string(s.substr(open + 1, s.size() - open - 2));
}

std::string anonymous_namespace_stem(std::string_view mangled) {
  constexpr std::string_view kPrefix = "_GLOBAL__N__";
  size_t at = mangled.find(kPrefix);
  if (at == std::string_view::npos) return {};
  size_t i = at + kPrefix.size();
  while (i < mangled.size() && std::isxdigit(static_cast<unsigned char>(mangled[i]))) ++i;  // hash
  if (i >= mangled.size() || mangled[i] != '_') return {};
  ++i;
  size_t len = 0, digits = 0;
  while (i < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[i])) && digits < 6) {
    len = len * 10 + static_cast<size_t>(mangled[i++] - '0');
    ++digits;
  }
  if (i < mangled.size() && mangled[i] == '_') ++i;  // "_10_kernels_cu"
  if (digits == 0 || len == 0 || i + len > mangled.size()) return {};
  return std::string(mangled.substr(i, len));
}

}  // namespace streamhaz::analysis
