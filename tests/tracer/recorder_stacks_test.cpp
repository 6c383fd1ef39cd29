// Call stacks in the recorder: every record with a seq gets a StackRef to an interned call
// site; frames, modules and call sites are defined once, before their first use; a kernel's
// StackRef follows its Access records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "record_log.h"
#include "streamhaz/tracer/stack_table.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
using streamhaz::tracer::testing::RecordLog;

namespace {

// A scripted thread: the stack returned is whatever the test set last; Python frames are
// described from a table, native ones fall in two fake modules.
struct FakeSource : StackSource {
  std::vector<RawFrame> frames;
  std::map<std::pair<uint64_t, int64_t>, PythonFrameInfo> python;
  std::vector<StackNeed> needs;
  int described = 0, module_queries = 0;

  size_t capture(StackNeed need, RawFrame* out, size_t max) override {
    needs.push_back(need);
    size_t n = std::min(max, frames.size());
    std::copy(frames.begin(), frames.begin() + n, out);
    return n;
  }
  PythonFrameInfo describe_python(const RawFrame& f) override {
    ++described;
    return python.at({f.key, f.detail});
  }
  std::optional<ModuleInfo> module_of(uint64_t pc) override {
    ++module_queries;
    if (pc >= 0x400000 && pc < 0x500000) return ModuleInfo{"/opt/app/bin/train", 0x400000, 0x100000, "abcd"};
    if (pc >= 0x7f0000 && pc < 0x800000) return ModuleInfo{"/usr/lib/libtorch_cuda.so", 0x7f0000, 0x10000, ""};
    return std::nullopt;
  }
};

RawFrame py(uint64_t code, int64_t offset) { return RawFrame{FrameKind::Python, code, offset, code + 1}; }
RawFrame native(uint64_t pc) { return RawFrame{FrameKind::Native, pc, 0, 0}; }

std::map<StringId, std::string> strings(const RecordLog& log) {
  std::map<StringId, std::string> m;
  for (const auto& s : log.all<StringDef>()) m[s.id] = s.text;
  return m;
}

// The frames of a call site, innermost first, as "file:line function" or "module+0xoff".
std::vector<std::string> resolve(const RecordLog& log, CallsiteId site) {
  auto text = strings(log);
  std::map<CallsiteId, CallsiteDef> sites;
  std::map<FrameId, FrameDef> frames;
  std::map<ModuleId, ModuleDef> modules;
  for (const auto& c : log.all<CallsiteDef>()) sites[c.id] = c;
  for (const auto& f : log.all<FrameDef>()) frames[f.id] = f;
  for (const auto& m : log.all<ModuleDef>()) modules[m.id] = m;
  std::vector<std::string> out;
  for (CallsiteId s = site; s != 0; s = sites.at(s).parent) {
    const FrameDef& f = frames.at(sites.at(s).frame);
    if (f.kind == FrameKind::Python) {
      out.push_back(text[f.file] + ":" + std::to_string(f.line) + " " + text[f.function]);
    } else {
      char off[32];
      std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(f.offset));
      out.push_back((f.module ? text[modules.at(f.module).path] : std::string("?")) + off);
    }
  }
  return out;
}

// Every definition comes before the first record that uses it.
void check_defined_before_use(const RecordLog& log) {
  std::set<uint32_t> sites, frames, modules;
  for (const Record& r : log.records) {
    if (auto* m = std::get_if<ModuleDef>(&r)) modules.insert(m->id);
    if (auto* f = std::get_if<FrameDef>(&r)) {
      if (f->module) CHECK(modules.count(f->module));
      frames.insert(f->id);
    }
    if (auto* c = std::get_if<CallsiteDef>(&r)) {
      CHECK(frames.count(c->frame));
      if (c->parent) CHECK(sites.count(c->parent));
      sites.insert(c->id);
    }
    if (auto* s = std::get_if<StackRef>(&r)) CHECK(sites.count(s->callsite));
  }
}

}  // namespace

TEST_CASE("stacks: a repeated call site costs one StackRef and no new definitions") {
  RecordLog log;
  Recorder rec(log);
  FakeSource src;
  src.python[{100, 4}] = {"train.py", "step", 42};
  src.python[{200, 10}] = {"train.py", "main", 7};
  src.frames = {py(100, 4), py(200, 10)};
  rec.set_stack_source(&src);
  rec.stream_created(0x10, 0, 0, 0);
  const size_t defs_after_first = log.count<FrameDef>() + log.count<CallsiteDef>();
  for (int i = 0; i < 3; ++i) {
    streamhaz::trace::Memcpy m;
    m.dst = 0x1000;
    m.src = 0x2000;
    m.width = 64;
    rec.memcpy_issued(StreamRef{0x10, 0, false}, 0, m);
  }
  CHECK(log.count<FrameDef>() + log.count<CallsiteDef>() == defs_after_first);
  CHECK(src.described == 2);
  auto refs = log.all<StackRef>();
  REQUIRE(refs.size() == 4);  // the stream's creation and three copies
  for (const auto& r : refs) CHECK(r.callsite == refs[0].callsite);
  auto copies = log.all<streamhaz::trace::Memcpy>();
  CHECK(refs[1].seq == copies[0].op.seq);
  CHECK(resolve(log, refs[0].callsite) == std::vector<std::string>{"train.py:42 step", "train.py:7 main"});
  check_defined_before_use(log);
}

TEST_CASE("stacks: stacks that share outer frames share their call sites") {
  RecordLog log;
  Recorder rec(log);
  FakeSource src;
  src.python[{100, 4}] = {"model.py", "forward", 10};
  src.python[{101, 8}] = {"model.py", "backward", 20};
  src.python[{200, 10}] = {"train.py", "main", 7};
  rec.set_stack_source(&src);
  src.frames = {py(100, 4), py(200, 10)};
  rec.event_created(0x99, 0);
  rec.event_recorded(0x99, StreamRef{0, 0, false});
  src.frames = {py(101, 8), py(200, 10)};
  rec.event_recorded(0x99, StreamRef{0, 0, false});
  auto refs = log.all<StackRef>();
  REQUIRE(refs.size() >= 2);
  const CallsiteId a = refs[refs.size() - 2].callsite, b = refs.back().callsite;
  CHECK(a != b);
  CHECK(log.count<CallsiteDef>() == 3);  // main, main>forward, main>backward
  CHECK(resolve(log, b) == std::vector<std::string>{"model.py:20 backward", "train.py:7 main"});
  check_defined_before_use(log);
}

TEST_CASE("stacks: instruction offsets of one line share a frame") {
  RecordLog log;
  Recorder rec(log);
  FakeSource src;
  src.python[{100, 4}] = {"train.py", "step", 42};
  src.python[{100, 6}] = {"train.py", "step", 42};  // another call on the same line
  rec.set_stack_source(&src);
  src.frames = {py(100, 4)};
  rec.device_synchronized(0);
  src.frames = {py(100, 6)};
  rec.device_synchronized(0);
  CHECK(log.count<FrameDef>() == 1);
  auto refs = log.all<StackRef>();
  REQUIRE(refs.size() == 2);
  CHECK(refs[0].callsite == refs[1].callsite);
}

TEST_CASE("stacks: native frames name their module once and carry offsets from its base") {
  RecordLog log;
  Recorder rec(log);
  FakeSource src;
  rec.set_stack_source(&src);
  src.frames = {native(0x7f0010), native(0x401234), native(0x400100), native(0x900000)};
  rec.allocated(AllocKind::Device, 0x7f0000000000, 1 << 20, 0);
  auto modules = log.all<ModuleDef>();
  REQUIRE(modules.size() == 2);
  CHECK(src.module_queries == 3);  // the app's second frame found in the known module
  CHECK(resolve(log, log.all<StackRef>().at(0).callsite) ==
        std::vector<std::string>{"/usr/lib/libtorch_cuda.so+0x10", "/opt/app/bin/train+0x1234",
                                 "/opt/app/bin/train+0x100", "?+0x900000"});
  CHECK(src.needs.back() == StackNeed::Origin);
  check_defined_before_use(log);
}

TEST_CASE("stacks: a kernel's StackRef follows its Access records; launches ask for launch frames") {
  RecordLog log;
  Recorder rec(log);
  FakeSource src;
  src.python[{100, 4}] = {"train.py", "step", 42};
  src.frames = {py(100, 4)};
  rec.set_kernel_arguments(KernelArguments::Pointers);
  rec.set_stack_source(&src);
  rec.allocated(AllocKind::Device, 0x7f0000000000, 4096, 0);
  std::string params(16, '\0');
  const uint64_t ptr = 0x7f0000000010;
  std::memcpy(params.data(), &ptr, 8);
  KernelLaunch k = streamhaz::tracer::testing::launch(0x5, "kernel");
  k.params = params;
  rec.kernel_launched(StreamRef{0, 0, false}, 0, k);
  ptrdiff_t kernel_at = -1, access_at = -1, ref_at = -1;
  for (size_t i = 0; i < log.records.size(); ++i) {
    if (std::holds_alternative<Kernel>(log.records[i])) kernel_at = i;
    if (std::holds_alternative<Access>(log.records[i])) access_at = i;
    if (auto* s = std::get_if<StackRef>(&log.records[i]); s && s->seq == log.all<Kernel>().at(0).op.seq) ref_at = i;
  }
  REQUIRE(kernel_at >= 0);
  REQUIRE(access_at > kernel_at);
  CHECK(ref_at > access_at);
  CHECK(std::count(src.needs.begin(), src.needs.end(), StackNeed::KernelLaunch) == 1);
}

TEST_CASE("stacks: without a source, or with an empty stack, no stack records") {
  RecordLog log;
  Recorder rec(log);
  rec.device_synchronized(0);
  FakeSource src;  // no frames: a thread with nothing to show
  rec.set_stack_source(&src);
  rec.device_synchronized(0);
  CHECK(log.count<StackRef>() == 0);
  CHECK(log.count<CallsiteDef>() == 0);
}

TEST_CASE("stacks: the table stops growing at its bound and says how often it refused") {
  std::vector<Record> out;
  StackTable table([&](const Record& r) { out.push_back(r); }, [](std::string_view) { return StringId(1); }, 10);
  FakeSource src;
  for (uint64_t i = 0; i < 10; ++i) {
    RawFrame f = native(0x10000000 + i);
    CHECK(table.intern({&f, 1}, src) != 0);
  }
  RawFrame one_more = native(0x1);
  CHECK(table.intern({&one_more, 1}, src) == 0);
  CHECK(table.refused() == 1);
  RawFrame known = native(0x10000000);
  CHECK(table.intern({&known, 1}, src) != 0);  // what is known stays known
}

TEST_CASE("stacks: thousands of stacks, each keeps its one call site as the table grows") {
  std::vector<Record> out;
  StackTable table([&](const Record& r) { out.push_back(r); }, [](std::string_view) { return StringId(1); });
  FakeSource src;
  // Stacks that share all frames but one, and stacks that are each other's frames reordered.
  auto stack = [](uint64_t i) {
    return std::vector<RawFrame>{native(0x400000 + 16 * (i % 97)), native(0x500000 + 16 * (i / 97)), native(0x600000)};
  };
  std::vector<CallsiteId> first;
  for (uint64_t i = 0; i < 5000; ++i) first.push_back(table.intern(stack(i), src));
  for (uint64_t i = 0; i < 5000; ++i) REQUIRE(table.intern(stack(i), src) == first[i]);
  std::sort(first.begin(), first.end());
  CHECK(std::unique(first.begin(), first.end()) == first.end());  // distinct stacks, distinct sites
  CHECK(first.front() != 0);
  const auto a = std::vector<RawFrame>{native(0x1), native(0x2)}, b = std::vector<RawFrame>{native(0x2), native(0x1)};
  CHECK(table.intern(a, src) != table.intern(b, src));
}

TEST_CASE("stacks: a path prefix map rewrites frame files and module paths, not the rest") {
  RecordLog log;
  Recorder rec(log);
  FakeSource src;
  src.python[{100, 4}] = {"/home/me/project/train.py", "step", 42};
  src.python[{200, 10}] = {"/usr/lib/python3.12/runpy.py", "_run_code", 88};
  PathPrefixMap paths;
  REQUIRE(PathPrefixMap::parse("/home/me/project/=;/opt/app/=app/", paths).empty());
  rec.set_stack_source(&src, paths);
  src.frames = {native(0x400010), py(100, 4), py(200, 10)};
  rec.stream_created(0x10, 0, 0, 0);
  auto refs = log.all<StackRef>();
  REQUIRE(refs.size() == 1);
  CHECK(resolve(log, refs[0].callsite) ==
        std::vector<std::string>{"app/bin/train+0x10", "train.py:42 step", "/usr/lib/python3.12/runpy.py:88 _run_code"});
}

TEST_CASE("stacks: path prefix maps parse OLD=NEW entries and refuse malformed ones") {
  PathPrefixMap m;
  CHECK(PathPrefixMap::parse("/a/b=x;;/c=", m).empty());
  CHECK(m.apply("/a/b/f.py") == "x/f.py");
  CHECK(m.apply("/c/d.py") == "/d.py");
  CHECK(m.apply("/e/f.py") == "/e/f.py");
  CHECK(m.describe() == "/a/b=x;/c=");
  CHECK(PathPrefixMap::parse("/a=b=c", m).empty());  // splits at the last '='
  CHECK(m.apply("/a=b/x") == "c/x");
  PathPrefixMap kept = m;
  CHECK_THAT(PathPrefixMap::parse("/no/equals", m), Catch::Contains("'/no/equals'"));
  CHECK_THAT(PathPrefixMap::parse("=relative", m), Catch::Contains("OLD not empty"));
  CHECK(m.describe() == kept.describe());  // a refused map leaves the old one
}
