// Offline symbolisation of native frames: a return address taken in a small library built with
// -g (tests/analyzer/probe) comes back as its function, file and line, and only from a file
// whose build id is the traced one.
#include <catch2/catch.hpp>

#include <elf.h>
#include <link.h>

#include <cstring>

#include "model/stack_table.h"
#include "probe/symbol_probe.h"
#include "symbols/native_symbolizer.h"

using namespace streamhaz;
using namespace streamhaz::analysis;

namespace {

struct LoadedModule {
  std::string path;
  uint64_t base = 0;  // dlpi_addr, as the tracer records it
  uint64_t size = 0;
  std::string build_id;
};

std::string hex(const unsigned char* p, size_t n) {
  std::string h;
  for (size_t i = 0; i < n; ++i) h += "0123456789abcdef"[p[i] >> 4], h += "0123456789abcdef"[p[i] & 15];
  return h;
}

// The loaded object holding `address`, with its NT_GNU_BUILD_ID.
LoadedModule module_of(const void* address) {
  struct Search {
    uintptr_t address;
    LoadedModule found;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        bool inside = false;
        uint64_t end = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
          end = std::max<uint64_t>(end, ph.p_vaddr + ph.p_memsz);
          inside |= s->address >= lo && s->address < lo + ph.p_memsz;
        }
        if (!inside) return 0;
        s->found.path = info->dlpi_name;
        s->found.base = info->dlpi_addr;
        s->found.size = end;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
          const unsigned char* stop = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= stop) {
            auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const unsigned char* name = p + sizeof *n;
            const unsigned char* desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
              s->found.build_id = hex(desc, n->n_descsz);
            p = desc + ((n->n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  return search.found;
}

}  // namespace

TEST_CASE("a native return address is symbolised to its call's function, file and line", "[symbols]") {
  int line = 0;
  const void* ra = symbol_probe_call_site(&line);
  const LoadedModule m = module_of(ra);
  REQUIRE(!m.path.empty());
  REQUIRE(m.path.find("symbol_probe") != std::string::npos);
  const uint64_t offset = reinterpret_cast<uintptr_t>(ra) - m.base;

  NativeSymbolizer symbolizer;
  if (!NativeSymbolizer::available()) {
    CHECK_FALSE(symbolizer.lookup(m.path, m.build_id, offset));
    WARN("built without libdw: native frames print as module+offset");
    return;
  }
  REQUIRE_FALSE(m.build_id.empty());
  auto loc = symbolizer.lookup(m.path, m.build_id, offset);
  REQUIRE(loc);
  CHECK(loc->function == "symbol_probe_call_site");
  CHECK(loc->file.size() >= 14);
  CHECK(loc->file.ends_with("symbol_probe.cpp"));
  CHECK(loc->line == static_cast<uint32_t>(line));

  SECTION("through the stack table, as check resolves a trace's native frame") {
    auto make_table = [&] {
      StackTable table;
      table.add(trace::StringDef{1, m.path});
      table.add(trace::StringDef{2, m.build_id});
      table.add(trace::ModuleDef{1, 1, m.base, m.size, 2});
      table.add(trace::FrameDef{1, trace::FrameKind::Native, 0, 0, 0, 1, offset});
      table.add(trace::CallsiteDef{1, 0, 1});
      return table;
    };
    const Stack stack = make_table().resolve(1, &symbolizer);
    REQUIRE(stack.size() == 1);
    CHECK(stack[0].function == "symbol_probe_call_site");
    CHECK(stack[0].line == static_cast<uint32_t>(line));
    CHECK(stack[0].module == m.path);
    CHECK(stack[0].offset == offset);
    // Without a symbolizer (or with symbolisation off) the frame keeps module and offset only.
    CHECK(make_table().resolve(1, nullptr)[0].function.empty());
  }
  SECTION("a file with another build id is not trusted") {
    CHECK_FALSE(symbolizer.lookup(m.path, std::string(m.build_id.size(), '0'), offset));
    CHECK_FALSE(symbolizer.lookup(m.path, "", offset));
  }
  SECTION("a missing file gives nothing") {
    CHECK_FALSE(symbolizer.lookup("/nonexistent/libgone.so", m.build_id, offset));
  }
}
