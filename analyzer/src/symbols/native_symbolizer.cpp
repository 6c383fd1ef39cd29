// NativeSymbolizer: elfutils libdwfl in offline mode when STREAMHAZ_HAVE_LIBDW, else nothing
// (frames then print as module+offset).
#include "symbols/native_symbolizer.h"

#include "streamhaz/analysis/demangle.h"

#ifdef STREAMHAZ_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

namespace streamhaz::analysis {
namespace {

// A native function's name as reports show it: demangled where it can be, else as it is.
[[maybe_unused]] std::string function_name(const char* name) {
  if (!name) return {};
  return demangle_symbol(name).value_or(name);
}

}  // namespace

#ifdef STREAMHAZ_HAVE_LIBDW

struct NativeSymbolizer::Module {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;  // null: not usable (missing file, other build id)
  Dwarf_Addr bias = 0;
  ~Module() {
    if (dwfl) dwfl_end(dwfl);
  }
};

namespace {

std::string hex(const unsigned char* bytes, int n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string h;
  for (int i = 0; i < n; ++i) {
    h.push_back(digits[bytes[i] >> 4]);
    h.push_back(digits[bytes[i] & 15]);
  }
  return h;
}

// Offline reporting: the file as it is on disk, separate debug info found by build id
// (/usr/lib/debug/.build-id) or debuglink as the distribution installs it.
char* no_debuginfo_path = nullptr;
const Dwfl_Callbacks kOffline = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address,
                                 &no_debuginfo_path};

}  // namespace

NativeSymbolizer::NativeSymbolizer() = default;
NativeSymbolizer::~NativeSymbolizer() = default;
bool NativeSymbolizer::available() { return true; }

NativeSymbolizer::Module* NativeSymbolizer::open(const std::string& path, const std::string& build_id) {
  auto& slot = modules_[{path, build_id}];
  if (slot) return slot.get();
  slot = std::make_unique<Module>();
  Module& m = *slot;
  m.dwfl = dwfl_begin(&kOffline);
  if (!m.dwfl || path.empty() || path[0] != '/') return &m;
  Dwfl_Module* mod = dwfl_report_offline(m.dwfl, path.c_str(), path.c_str(), -1);
  dwfl_report_end(m.dwfl, nullptr, nullptr);
  if (!mod) return &m;
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int n = dwfl_module_build_id(mod, &bits, &vaddr);
  const std::string found = n > 0 ? hex(bits, n) : std::string();
  if (found != build_id) return &m;  // another build of the file: its offsets mean other code
  if (!dwfl_module_getelf(mod, &m.bias)) return &m;
  m.module = mod;
  return &m;
}

std::optional<SourceLocation> NativeSymbolizer::lookup(const std::string& module_path, const std::string& build_id,
                                                       uint64_t offset) {
  if (offset == 0) return std::nullopt;
  Module* m = open(module_path, build_id);
  if (!m->module) return std::nullopt;
  const Dwarf_Addr addr = m->bias + offset - 1;  // the call instruction, not the return address
  SourceLocation loc;
  loc.function = function_name(dwfl_module_addrname(m->module, addr));
  if (Dwfl_Line* line = dwfl_module_getsrc(m->module, addr)) {
    Dwarf_Addr line_addr = 0;
    int lineno = 0, column = 0;
    if (const char* file = dwfl_lineinfo(line, &line_addr, &lineno, &column, nullptr, nullptr)) {
      loc.file = file;
      loc.line = lineno > 0 ? static_cast<uint32_t>(lineno) : 0;
    }
  }
  if (loc.function.empty() && loc.file.empty()) return std::nullopt;
  return loc;
}

#else

struct NativeSymbolizer::Module {};
NativeSymbolizer::NativeSymbolizer() = default;
NativeSymbolizer::~NativeSymbolizer() = default;
bool NativeSymbolizer::available() { return false; }
NativeSymbolizer::Module* NativeSymbolizer::open(const std::string&, const std::string&) { return nullptr; }
std::optional<SourceLocation> NativeSymbolizer::lookup(const std::string&, const std::string&, uint64_t) {
  return std::nullopt;
}

#endif

}  // namespace streamhaz::analysis
