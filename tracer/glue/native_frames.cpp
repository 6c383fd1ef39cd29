#include "native_frames.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>
#include <unwind.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace streamhaz::tracer::glue {
namespace {

bool contains(const std::string& path, const char* part) { return path.find(part) != std::string::npos; }

bool plumbing_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return contains(name, "libstreamhaz-tracer") || contains(name, "libcupti") ||
         name.rfind("libcuda.so", 0) == 0 || name.rfind("libcudart.so", 0) == 0;
}

std::string hex(const unsigned char* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

// NT_GNU_BUILD_ID from the object's PT_NOTE segments, as mapped.
std::string build_id(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const char* name = p + sizeof note;
      const char* desc = name + ((note.n_namesz + 3) & ~3u);
      if (desc + note.n_descsz > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        return hex(reinterpret_cast<const unsigned char*>(desc), note.n_descsz);
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return {};
}

std::string executable_path() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string("[executable]");
}

struct UnwindState {
  const ModuleMap* modules;
  RawFrame* out;
  size_t max;
  size_t n = 0;
  bool in_plumbing = true;  // still cutting the inner end
  int seen = 0;
};

_Unwind_Reason_Code on_frame(_Unwind_Context* context, void* arg) {
  auto& s = *static_cast<UnwindState*>(arg);
  if (++s.seen > 256) return _URC_END_OF_STACK;
  const uint64_t pc = _Unwind_GetIP(context);
  if (pc == 0) return _URC_END_OF_STACK;
  if (s.in_plumbing) {
    if (s.modules->is_cuda_plumbing(pc)) return _URC_NO_REASON;
    s.in_plumbing = false;
  }
  s.out[s.n++] = RawFrame{trace::FrameKind::Native, pc, 0, 0};
  return s.n < s.max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

}  // namespace

void ModuleMap::refresh() {
  std::lock_guard lock(refresh_mu_);
  const Snapshot* old = current_.load(std::memory_order_acquire);
  if (old) {
    // The loader's counters come with the first object: stop there when nothing changed.
    std::pair<unsigned long long, unsigned long long> counts{0, 0};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t size, void* arg) -> int {
          if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
            *static_cast<std::pair<unsigned long long, unsigned long long>*>(arg) = {info->dlpi_adds, info->dlpi_subs};
          return 1;
        },
        &counts);
    if (counts.first == old->adds && counts.second == old->subs) return;
  }
  auto* scan = new Snapshot;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* arg) -> int {
        auto& s = *static_cast<Snapshot*>(arg);
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
          s.adds = info->dlpi_adds;
          s.subs = info->dlpi_subs;
        }
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
          hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        if (hi <= lo) return 0;
        Entry e;
        e.info.path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "";
        if (e.info.path.empty() && s.entries.empty()) e.info.path = executable_path();
        if (e.info.path.empty()) return 0;  // the vDSO
        e.info.base = info->dlpi_addr;  // offsets are relative to the load bias: ELF addresses
        e.info.size = hi - info->dlpi_addr;
        e.info.build_id = build_id(info);
        e.lo = lo;
        e.hi = hi;
        e.plumbing = plumbing_path(e.info.path);
        s.entries.push_back(std::move(e));
        return 0;
      },
      scan);
  std::sort(scan->entries.begin(), scan->entries.end(), [](const Entry& a, const Entry& b) { return a.lo < b.lo; });
  current_.store(scan, std::memory_order_release);
}

const ModuleMap::Entry* ModuleMap::lookup(uint64_t pc) const {
  const Snapshot* snap = current_.load(std::memory_order_acquire);
  if (!snap) return nullptr;
  const auto& entries = snap->entries;
  auto it = std::upper_bound(entries.begin(), entries.end(), pc, [](uint64_t p, const Entry& e) { return p < e.lo; });
  if (it == entries.begin()) return nullptr;
  --it;
  return pc < it->hi ? &*it : nullptr;
}

std::optional<ModuleInfo> ModuleMap::find(uint64_t pc) const {
  const Entry* e = lookup(pc);
  if (!e) return std::nullopt;
  return e->info;
}

bool ModuleMap::knows(uint64_t pc) const { return lookup(pc) != nullptr; }

bool ModuleMap::is_cuda_plumbing(uint64_t pc) const {
  const Entry* e = lookup(pc);
  return e && e->plumbing;
}

size_t unwind_program_frames(ModuleMap& modules, RawFrame* out, size_t max) {
  if (max == 0) return 0;
  UnwindState state{&modules, out, max};
  _Unwind_Backtrace(on_frame, &state);
  bool unknown = false;
  for (size_t i = 0; i < state.n && !unknown; ++i) unknown = !modules.knows(out[i].key);
  if (!unknown) return state.n;
  // An object loaded since the last scan: rescan (outside every lock) and cut again.
  modules.refresh();
  size_t skip = 0;
  while (skip < state.n && modules.is_cuda_plumbing(out[skip].key)) ++skip;
  std::move(out + skip, out + state.n, out);
  return state.n - skip;
}

}  // namespace streamhaz::tracer::glue
