#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "streamhaz/trace/reader.h"
#include "streamhaz/tracer/self_profile.h"
#include "streamhaz/tracer/session.h"

using namespace streamhaz::tracer;
using namespace streamhaz::trace;
namespace fs = std::filesystem;

namespace {

KernelLaunch launch_k() {
  KernelLaunch k;
  k.function = 1;
  k.name = "k";
  return k;
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("streamhaz-session-test-" + std::to_string(getpid()) + "-" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

ProcessIdentity rank(int r) {
  ProcessIdentity who;
  who.rank = r;
  who.world_size = 2;
  who.pid = 1234;
  who.host = "test";
  return who;
}

SessionOptions options_for(const TempDir& dir, size_t chunk_bytes = 64 * 1024) {
  SessionOptions o;
  o.out_dir = dir.path.string();
  o.chunk_bytes = chunk_bytes;
  o.flush_period = std::chrono::milliseconds(0);
  return o;
}

HeaderFn header_for(const ProcessIdentity& who) {
  return [who] {
    auto h = base_header(who, "api");
    h["devices"] = nlohmann::json::array({{{"index", 0}, {"name", "Test GPU"}}});
    return h;
  };
}

std::vector<Record> read_all(TraceReader& reader) {
  std::vector<Record> out;
  Record r;
  while (reader.next(r)) out.push_back(r);
  return out;
}

}  // namespace

TEST_CASE("a closed session leaves a complete trace named by rank") {
  TempDir dir;
  auto who = rank(1);
  {
    Session s(options_for(dir), who, header_for(who));
    s.recorder().stream_created(0xa, 0, 0, 0);
    for (int i = 0; i < 1000; ++i) s.recorder().kernel_launched(StreamRef{0xa, 0}, i + 1, launch_k());
    s.recorder().activity(5, 100, 200);
    s.close();
  }
  fs::path file = dir.path / "rank1.shz";
  REQUIRE(fs::exists(file));
  TraceReader reader(file.string());
  CHECK(reader.rank() == 1);
  CHECK(reader.header()["devices"][0]["name"] == "Test GPU");
  auto records = read_all(reader);
  CHECK(reader.clean_end());
  CHECK_FALSE(reader.truncated());
  size_t kernels = 0, timings = 0;
  for (auto& r : records) {
    kernels += std::holds_alternative<Kernel>(r);
    timings += std::holds_alternative<Timing>(r);
  }
  CHECK(kernels == 1000);
  CHECK(timings == 1);
}

TEST_CASE("a process that records nothing leaves no file") {
  TempDir dir;
  auto who = rank(0);
  {
    Session s(options_for(dir), who, header_for(who));
    s.flush();
    s.close();
  }
  CHECK_FALSE(fs::exists(dir.path / "rank0.shz"));
}

TEST_CASE("a session that dies after a flush leaves a readable, truncated trace") {
  TempDir dir;
  auto who = rank(0);
  {
    Session s(options_for(dir, 256), who, header_for(who));
    for (int i = 0; i < 500; ++i) s.recorder().memset_issued(StreamRef{0, 0}, 0, Memset{});
    s.flush();
    for (int i = 0; i < 500; ++i) s.recorder().memset_issued(StreamRef{0, 0}, 0, Memset{});
    s.forget_after_fork();  // as if killed: nothing more reaches the file
  }
  TraceReader reader((dir.path / "rank0.shz").string());
  auto records = read_all(reader);
  CHECK_FALSE(reader.clean_end());
  size_t memsets = 0;
  for (auto& r : records) memsets += std::holds_alternative<Memset>(r);
  CHECK(memsets == 500);
}

TEST_CASE("the background flusher writes without being asked") {
  TempDir dir;
  auto who = rank(0);
  auto opts = options_for(dir);
  opts.flush_period = std::chrono::milliseconds(20);
  Session s(opts, who, header_for(who));
  s.start_flusher();
  s.recorder().memset_issued(StreamRef{0, 0}, 0, Memset{});
  fs::path file = dir.path / "rank0.shz";
  for (int i = 0; i < 200 && !(fs::exists(file) && fs::file_size(file) > 64); ++i) usleep(10000);
  REQUIRE(fs::exists(file));
  CHECK(s.flush_from_signal() == true);
  s.close();
  TraceReader reader(file.string());
  read_all(reader);
  CHECK(reader.clean_end());
}

TEST_CASE("a second process claiming the same rank writes beside it") {
  TempDir dir;
  auto who = rank(0);
  Session a(options_for(dir), who, header_for(who));
  Session b(options_for(dir), who, header_for(who));
  a.recorder().memset_issued(StreamRef{0, 0}, 0, Memset{});
  b.recorder().memset_issued(StreamRef{0, 0}, 0, Memset{});
  a.close();
  b.close();
  CHECK(fs::exists(dir.path / "rank0.shz"));
  CHECK(fs::exists(dir.path / "rank0.1234.shz"));
}

TEST_CASE("records the glue had to drop are counted in the trace, the last count winning") {
  TempDir dir;
  std::string path;
  {
    Session s(options_for(dir), rank(0), header_for(rank(0)));
    s.recorder().kernel_launched(StreamRef{0, 0}, 1, launch_k());
    s.recorder().note_dropped();
    s.flush();
    s.recorder().note_dropped();
    s.recorder().note_dropped();
    s.close();
    path = s.path();
  }
  TraceReader reader(path);
  read_all(reader);
  CHECK(reader.header().value("dropped_records", uint64_t{0}) == 3);
}

TEST_CASE("a trace with nothing dropped says nothing about it") {
  TempDir dir;
  std::string path;
  {
    Session s(options_for(dir), rank(0), header_for(rank(0)));
    s.recorder().kernel_launched(StreamRef{0, 0}, 1, launch_k());
    s.close();
    path = s.path();
  }
  TraceReader reader(path);
  read_all(reader);
  CHECK_FALSE(reader.header().contains("dropped_records"));
}

TEST_CASE("a self-profiled session writes the tracer's phase times into the trace's header") {
  TempDir dir;
  std::string path;
  enable_self_profile(true);
  {
    Session s(options_for(dir), rank(0), header_for(rank(0)));
    s.recorder().kernel_launched(StreamRef{0, 0}, 1, launch_k());
    s.flush();  // compresses and writes once before the end
    s.close();
    path = s.path();
  }
  enable_self_profile(false);
  TraceReader reader(path);
  read_all(reader);
  REQUIRE(reader.header().contains("tracer_profile"));
  uint64_t recorder_calls = 0, writes = 0;
  for (const auto& row : reader.header()["tracer_profile"]["phases"]) {
    if (row["name"] == "recorder") recorder_calls = row["calls"].get<uint64_t>();
    if (row["name"] == "write") writes = row["calls"].get<uint64_t>();
  }
  CHECK(recorder_calls >= 1);
  CHECK(writes >= 1);  // the flush's; the last write comes after the profile was taken
}

TEST_CASE("a session not profiled writes no profile") {
  TempDir dir;
  std::string path;
  {
    Session s(options_for(dir), rank(0), header_for(rank(0)));
    s.recorder().kernel_launched(StreamRef{0, 0}, 1, launch_k());
    s.close();
    path = s.path();
  }
  TraceReader reader(path);
  read_all(reader);
  CHECK_FALSE(reader.header().contains("tracer_profile"));
}
