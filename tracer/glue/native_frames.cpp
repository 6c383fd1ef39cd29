#include "native_frames.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>
#include <pthread.h>
#include <unwind.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "streamhaz/tracer/hot_path.h"
#include "streamhaz/tracer/per_thread.h"
#include "streamhaz/tracer/self_profile.h"

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
  FrameSizeTable* sizes;
  VaryingFrameSizes* varying;  // this thread's
  RawFrame* out;
  size_t max;
  size_t n = 0;
  bool in_plumbing = true;  // still cutting the inner end
  int seen = 0;
  // The frame before, for learning its size: libgcc reports each frame as (the return
  // address into it, the CFA of its callee), so a frame's size shows at the next report.
  uint64_t last_pc = 0, last_cfa = 0;
  bool ended_by_unwinder = true;  // false once this walk stopped it
  uint64_t start_cfa = 0;  // reports below it are the unwinder's own frames and its caller's
  uint64_t stack_lo = 0, stack_hi = 0;  // the live part of this thread's stack: the only words read
};

_Unwind_Reason_Code on_frame(_Unwind_Context* context, void* arg) {
  auto& s = *static_cast<UnwindState*>(arg);
  const uint64_t pc = _Unwind_GetIP(context);
  const uint64_t cfa = _Unwind_GetCFA(context);
  // The word below the callee's CFA is this frame's return address (not so across a signal
  // frame): only then is the distance between two reports a frame's size.
  uint64_t slot = 0;
  if (cfa >= s.stack_lo + 8 && cfa <= s.stack_hi) std::memcpy(&slot, reinterpret_cast<const void*>(cfa - 8), sizeof slot);
  if (pc == 0) {
    // No return address: the frame before was the outermost.
    if (s.last_pc) s.sizes->learn_outermost(s.last_pc);
    s.last_pc = 0;
    s.ended_by_unwinder = false;
    return _URC_END_OF_STACK;
  }
  if (s.last_pc && cfa > s.last_cfa) {
    const uint32_t size = uint32_t(std::min<uint64_t>(cfa - s.last_cfa, UINT32_MAX));
    s.sizes->learn(s.last_pc, size);
    // A frame of varying size: where it was this time, for this thread's learned walks.
    if (slot == pc && size <= FrameSizeTable::kMaxSize && s.sizes->find(s.last_pc) == FrameSizeTable::kVaries)
      s.varying->remember(s.last_pc, s.last_cfa, size, pc);
  }
  s.last_pc = slot == pc ? pc : 0;
  s.last_cfa = cfa;
  if (cfa < s.start_cfa) return _URC_NO_REASON;
  // Past the last frame kept: this report only taught the last one's size.
  if (s.n == s.max || ++s.seen > 256) {
    s.ended_by_unwinder = false;
    return _URC_END_OF_STACK;
  }
  if (s.in_plumbing) {
    if (s.modules->is_cuda_plumbing(pc)) return _URC_NO_REASON;
    s.in_plumbing = false;
  }
  s.out[s.n++] = RawFrame{trace::FrameKind::Native, pc, 0, 0};
  return _URC_NO_REASON;
}

// The calling thread's stack, [lo, hi), read once per thread; {0, 0} where unknown.
std::pair<uint64_t, uint64_t> thread_stack() {
  thread_local std::pair<uint64_t, uint64_t> bounds{1, 0};
  if (bounds.first == 1) {
    bounds = {0, 0};
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* base = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &base, &size) == 0 && base)
        bounds = {reinterpret_cast<uint64_t>(base), reinterpret_cast<uint64_t>(base) + size};
      pthread_attr_destroy(&attr);
    }
  }
  return bounds;
}

std::atomic<uint32_t> verify_every{256};
std::atomic<uint64_t> fast_walks{0}, slow_walks{0}, verified{0}, mismatches{0}, truncated_walks{0};
// Frames that learned walks read: answered from their thread's recent walks, or asked for.
std::atomic<uint64_t> frames_recalled{0}, frames_asked{0};
// Why learned walks failed: an address of no known size before any program frame (in the CUDA
// plumbing) or after; a size that varies, likewise; a frame off the stack.
std::atomic<uint64_t> failed_plumbing_unknown{0}, failed_plumbing_varies{0}, failed_unknown{0}, failed_varies{0},
    failed_off_stack{0};

void count_failure(const LearnedWalk& w) {
  const bool plumbing = w.kept == 0;
  if (w.failed_on == FrameSizeTable::kUnknown)
    (plumbing ? failed_plumbing_unknown : failed_unknown).fetch_add(1, std::memory_order_relaxed);
  else if (w.failed_on == FrameSizeTable::kVaries)
    (plumbing ? failed_plumbing_varies : failed_varies).fetch_add(1, std::memory_order_relaxed);
  else
    failed_off_stack.fetch_add(1, std::memory_order_relaxed);
}

// A learned walk may end at a frame of no usable size once it holds this many of the program's
// frames (enough to name the operator and what called it): a frame whose size varies, deep in
// the autograd thread's stack, sent about ten walks a step to libgcc (28 us each).
constexpr size_t kTruncateAt = 12;

FrameSizeTable& frame_sizes() {
  static auto* table = new FrameSizeTable;  // never destroyed: unwinding may come late
  return *table;
}

// Each thread's own (per_thread.h: too large for the thread-local block); tagged, since the
// types are the core's and others may keep their own.
struct TracerWalks;
VaryingFrameSizes& varying_sizes() { return PerThread<VaryingFrameSizes, TracerWalks>::get(); }
RecentWalks& recent_walks() { return PerThread<RecentWalks, TracerWalks>::get(); }
std::atomic<bool> recall_walks{true};
std::atomic<uint64_t> varying_stepped{0};

}  // namespace

bool ModuleMap::refresh() {
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
    if (counts.first == old->adds && counts.second == old->subs) return false;
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
  // After the new list: a walk that reads the new count asks the new list.
  scans_.fetch_add(1, std::memory_order_acq_rel);
  return old && scan->subs != old->subs;
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

namespace {

// Cuts the CUDA plumbing from the inner end of `out` once `modules` knows every address.
STREAMHAZ_HOT size_t cut_plumbing(ModuleMap& modules, RawFrame* out, size_t n) {
  bool unknown = false;
  for (size_t i = 0; i < n && !unknown; ++i) unknown = !modules.knows(out[i].key);
  if (!unknown) return n;
  // An object loaded since the last scan: rescan (outside every lock) and cut again. An object
  // unloaded may have left sizes of code no longer there: forget them all.
  if (modules.refresh()) frame_sizes().forget_all();
  size_t skip = 0;
  while (skip < n && modules.is_cuda_plumbing(out[skip].key)) ++skip;
  std::move(out + skip, out + n, out);
  return n - skip;
}

// The learned walk from this function's own frame; false where it cannot finish. `truncated`:
// it ended early at a frame of no usable size (kTruncateAt).
STREAMHAZ_HOT bool fast_unwind(ModuleMap& modules, uint64_t cfa, RawFrame* out, size_t max, size_t& n, bool& truncated) {
  const auto [lo, hi] = thread_stack();
  // Only the live part of the stack, above this frame (a signal's alternate stack: slow path).
  if (cfa <= lo || cfa > hi) return false;
  uint64_t ips[256];
  const LearnedWalk w = walk_learned_frames(frame_sizes(), cfa, cfa - 8, hi, ips, 256, max,
                                            [&](uint64_t ip, size_t kept) { return kept > 0 || !modules.is_cuda_plumbing(ip); },
                                            kTruncateAt, &varying_sizes(),
                                            recall_walks.load(std::memory_order_relaxed) ? &recent_walks() : nullptr,
                                            modules.scans());
  // Beside fast_walks' count (one cache line, which this thread then holds already).
  frames_recalled.fetch_add(w.recalled, std::memory_order_relaxed);
  frames_asked.fetch_add(w.asked, std::memory_order_relaxed);
  if (!w.ok) {
    count_failure(w);
    return false;
  }
  truncated = w.truncated;
  if (w.varying) varying_stepped.fetch_add(1, std::memory_order_relaxed);
  n = 0;
  for (size_t i = w.first_kept; i < w.n && n < max; ++i) out[n++] = RawFrame{trace::FrameKind::Native, ips[i], 0, 0};
  return true;
}

}  // namespace

STREAMHAZ_HOT __attribute__((noinline)) size_t unwind_program_frames(ModuleMap& modules, RawFrame* out, size_t max) {
  max = std::min(max, kMaxUnwound);
  if (max == 0) return 0;
  // The CFA of this very frame: where the learned walk starts and the slow one learns from.
  const uint64_t cfa = reinterpret_cast<uint64_t>(__builtin_dwarf_cfa());
  thread_local uint32_t calls = 0;
  const uint32_t every = verify_every.load(std::memory_order_relaxed);
  const bool check = every != 0 && ++calls % every == 0;
  size_t fast_n = 0;
  bool truncated = false;
  if (!check && fast_unwind(modules, cfa, out, max, fast_n, truncated)) {
    fast_walks.fetch_add(1, std::memory_order_relaxed);
    if (!truncated) {
      // Every address of a learned walk was, with its size, in an earlier libgcc walk, whose
      // cut asked the module map about it (and refreshed it): the plumbing is cut already.
      return fast_n;
    }
    truncated_walks.fetch_add(1, std::memory_order_relaxed);
    return cut_plumbing(modules, out, fast_n);  // its last address may be new
  }
  // A check walks both, the learned walk into a copy of its own; else the learned walk failed.
  RawFrame fast[kMaxUnwound];
  const bool fast_ok = check && fast_unwind(modules, cfa, fast, max, fast_n, truncated);
  slow_walks.fetch_add(1, std::memory_order_relaxed);
  UnwindState state{&modules, &frame_sizes(), &varying_sizes(), out, max};
  state.start_cfa = cfa;
  // Sizes are learned only where the return-address slot lies on this thread's own stack, above
  // this frame (an alternate signal stack or a foreign stack: nothing is learned).
  const auto [lo, hi] = thread_stack();
  if (cfa > lo && cfa <= hi) {
    state.stack_lo = cfa - 8;
    state.stack_hi = hi;
  }
  {
    PhaseTimer timer(Phase::NativeUnwindSlow);
    _Unwind_Backtrace(on_frame, &state);
  }
  if (state.ended_by_unwinder && state.last_pc) frame_sizes().learn_outermost(state.last_pc);  // no caller found
  if (fast_ok) {
    verified.fetch_add(1, std::memory_order_relaxed);
    // A truncated walk agrees when it is the slow walk's beginning.
    const bool same_length = truncated ? fast_n <= state.n : fast_n == state.n;
    if (!same_length || !std::equal(fast, fast + fast_n, out)) {
      // A size that changed under a learned walk: the slow walk above re-learned what it saw
      // (marking sizes that differ); count it so that tests and the profile can tell.
      mismatches.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return cut_plumbing(modules, out, state.n);
}

void set_unwind_check_period(uint32_t every) { verify_every.store(every, std::memory_order_relaxed); }

void set_recent_walks(bool on) { recall_walks.store(on, std::memory_order_relaxed); }

UnwindCounts unwind_counts() {
  UnwindCounts u{fast_walks.load(), slow_walks.load(),         verified.load(),
                 mismatches.load(), frame_sizes().learned(), truncated_walks.load()};
  u.failed_plumbing_unknown = failed_plumbing_unknown.load();
  u.failed_plumbing_varies = failed_plumbing_varies.load();
  u.failed_unknown = failed_unknown.load();
  u.failed_varies = failed_varies.load();
  u.failed_off_stack = failed_off_stack.load();
  u.through_varying = varying_stepped.load();
  u.frames_recalled = frames_recalled.load();
  u.frames_asked = frames_asked.load();
  return u;
}

}  // namespace streamhaz::tracer::glue
