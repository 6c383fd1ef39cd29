// The call-stack records of format version 3: compact, validated (ids defined before use), and
// built by TraceBuilder.
#include <catch2/catch.hpp>

#include <map>

#include "sample_records.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/record_json.h"
#include "streamhaz/trace/writer.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;

namespace {

// Writes `records` as one trace and reads it back to the end; throws what the reader throws.
std::vector<Record> write_and_read(const std::string& name, const std::vector<Record>& records) {
  const std::string path = temp_path(name);
  {
    TraceFileWriter w(path, test_header());
    for (const Record& r : records) w.add(r);
  }
  return read_all(path);
}

// A function, not a namespace-scope constant: GCC 12 tries to evaluate a namespace-scope
// vector's initialiser at compile time and runs out of memory on this variant.
std::vector<Record> definitions() {
  return {
    StringDef{1, "train.py"}, StringDef{2, "step"}, StringDef{3, "/usr/lib/libfoo.so"},
    ModuleDef{1, 3, 0x7f0000000000, 0x10000, 0},
    FrameDef{1, FrameKind::Python, 1, 2, 42, 0, 0},
    FrameDef{2, FrameKind::Native, 0, 0, 0, 1, 0x1234},
    CallsiteDef{1, 0, 1},
    CallsiteDef{2, 1, 2},
  };
}

// The definitions and then `more`.
template <class... R>
std::vector<Record> with(std::vector<Record> base, R... more) {
  (base.push_back(Record(more)), ...);
  return base;
}

}  // namespace

TEST_CASE("stack records round-trip, and ids defined before use are accepted", "[format][stacks]") {
  const auto records = with(definitions(), DeviceSync{7, 0}, StackRef{7, 2}, DeviceSync{8, 0}, StackRef{8, 0});
  const auto back = write_and_read("stacks-ok.shz", records);
  REQUIRE(back.size() == records.size() + 1);
  for (size_t i = 0; i < records.size(); ++i) CHECK(back[i] == records[i]);
}

TEST_CASE("stack ids used before their definition are format errors", "[format][stacks][corruption]") {
  SECTION("a stack reference to an undefined call site") {
    CHECK_THROWS_WITH(write_and_read("stacks-bad-ref.shz", with(definitions(), StackRef{7, 3})),
                      Catch::Contains("call site 3") && Catch::Contains("not defined") && Catch::Contains("at byte"));
  }
  SECTION("a call site with an undefined parent") {
    CHECK_THROWS_WITH(write_and_read("stacks-bad-parent.shz", with(definitions(), CallsiteDef{3, 9, 1})),
                      Catch::Contains("parent call site 9"));
  }
  SECTION("a call site with an undefined frame") {
    CHECK_THROWS_WITH(write_and_read("stacks-bad-frame.shz", with(definitions(), CallsiteDef{3, 1, 5})),
                      Catch::Contains("frame 5"));
  }
  SECTION("a native frame in an undefined module") {
    CHECK_THROWS_WITH(write_and_read("stacks-bad-module.shz",
                                     with(definitions(), FrameDef{3, FrameKind::Native, 0, 0, 0, 4, 0x10})),
                      Catch::Contains("module 4"));
  }
  SECTION("a call site redefined with another parent (a cycle could follow)") {
    CHECK_THROWS_WITH(write_and_read("stacks-redefined.shz", with(definitions(), CallsiteDef{1, 2, 1})),
                      Catch::Contains("defined twice"));
  }
  SECTION("id 0 is reserved") {
    CHECK_THROWS_WITH(write_and_read("stacks-zero.shz", with(definitions(), CallsiteDef{0, 1, 1})),
                      Catch::Contains("id 0 is reserved"));
  }
  SECTION("a frame kind out of range") {
    // FrameKind is stored as one varint: 3 is past Native.
    Record bad = FrameDef{3, static_cast<FrameKind>(3), 0, 0, 0, 0, 0};
    CHECK_THROWS_WITH(write_and_read("stacks-kind.shz", with(definitions(), bad)), Catch::Contains("enum value 3"));
  }
}

TEST_CASE("a stack reference costs a few bytes after its record", "[format][stacks]") {
  ChunkEncoder with_ref, without;
  for (ChunkEncoder* e : {&with_ref, &without}) e->add(DeviceSync{100000, 0});
  const size_t before = with_ref.payload_bytes();
  with_ref.add(StackRef{100000, 300});
  // Tag, a zero seq delta, a two-byte call-site id.
  CHECK(with_ref.payload_bytes() - before == 4);
  // The next record's seq delta is unchanged by the reference in between.
  with_ref.add(DeviceSync{100001, 0});
  without.add(DeviceSync{100001, 0});
  CHECK(with_ref.payload_bytes() - without.payload_bytes() == 4);
}

TEST_CASE("stack records export as JSON and are not API calls", "[format][stacks][json]") {
  const nlohmann::json frame = to_json(FrameDef{2, FrameKind::Native, 0, 0, 0, 1, 0x1234});
  CHECK(frame.at("type") == "frame");
  CHECK(frame.at("kind") == "native");
  CHECK(frame.at("offset") == 0x1234);
  CHECK(to_json(StackRef{7, 2}).at("type") == "stack");
  CHECK(to_json(CallsiteDef{2, 1, 2}).at("parent") == 1);
  CHECK(is_stack_record(StackRef{7, 2}));
  CHECK_FALSE(is_stack_record(DeviceSync{7, 0}));
  CHECK(api_seq(StackRef{7, 2}) == 0);
  CHECK(api_seq(DeviceSync{7, 0}) == 7);
  Memcpy m;
  m.op.seq = 9;
  CHECK(api_seq(m) == 9);
}

TEST_CASE("the builder interns frames and call sites and attaches stacks", "[format][builder][stacks]") {
  TraceBuilder run(1);
  auto& r = run.rank(0);
  const ModuleId lib = r.module("/usr/lib/libc10_cuda.so", 0x7f0000000000, 0x100000, "abcdef");
  const CallsiteId outer = r.stack({py("train.py", 10, "main")});
  const CallsiteId step = r.stack({py("model.py", 42, "step"), py("train.py", 10, "main")});
  const CallsiteId again = r.stack({py("model.py", 42, "step"), py("train.py", 10, "main")});
  const CallsiteId alloc_site = r.stack({native(lib, 0x4321), py("model.py", 7, "__init__"), py("train.py", 10, "main")});
  CHECK(step == again);
  CHECK(step != outer);
  r.use_stack(alloc_site);
  const uint64_t buf = r.alloc(1024);
  r.use_stack(step);
  const StreamId s = r.stream("s");
  const uint64_t copy = r.memcpy(s, buf, buf + 4096, 128);
  r.use_stack(0);
  r.device_sync();
  const std::string dir = temp_path("builder-stacks");
  run.write_dir(dir);

  std::map<uint64_t, CallsiteId> refs;
  std::map<CallsiteId, CallsiteDef> sites;
  size_t frames = 0;
  const Record* previous = nullptr;
  const auto recs = read_all(dir + "/rank0.shz");
  for (const Record& rec : recs) {
    if (const auto* ref = std::get_if<StackRef>(&rec)) {
      REQUIRE(previous);
      CHECK(ref->seq == api_seq(*previous));  // right after its record
      refs[ref->seq] = ref->callsite;
    }
    if (const auto* c = std::get_if<CallsiteDef>(&rec)) sites[c->id] = *c;
    frames += std::holds_alternative<FrameDef>(rec);
    previous = &rec;
  }
  CHECK(frames == 4);       // main, step, __init__ and the native frame: each once
  CHECK(sites.size() == 4);  // main, main>step, main>__init__, main>__init__>native
  CHECK(sites.at(step).parent == outer);
  CHECK(refs.at(copy) == step);
  CHECK(refs.size() == 3);  // alloc, stream creation, copy; nothing after use_stack(0)
}
