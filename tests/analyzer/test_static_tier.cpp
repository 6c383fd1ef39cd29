// The static footprint tier in the engine: kernels.json summaries evaluated on each launch's
// argument bytes give the kernel byte ranges (approximate where the extent is unknown).
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>

#include "scenario.h"

using namespace streamhaz::testing;
using streamhaz::analysis::FindingKind;

namespace {

// A one-dimensional kernel: fill(float* out, long n) writes n floats; scale(float* p) touches p
// with an unknown extent.
constexpr const char* kKernelsJson = R"({"format": "streamhaz-kernels", "version": 1, "kernels": [
  {"name": "fill", "signature": "float*, long", "file": "k.cu", "line": 1, "template": false,
   "complete": true, "layout_known": true, "params": [
    {"name": "out", "type": "float *", "offset": 0, "size": 8, "pointer": true, "pointee_bytes": 4,
     "access": "write", "extent": {"param": 1}},
    {"name": "n", "type": "long", "offset": 8, "size": 8, "pointer": false, "integer": true, "signed": true}]},
  {"name": "scale", "signature": "float*", "file": "k.cu", "line": 9, "template": false,
   "complete": true, "layout_known": true, "params": [
    {"name": "p", "type": "float *", "offset": 0, "size": 8, "pointer": true, "pointee_bytes": 4,
     "access": "readwrite", "extent": null}]}]})";

std::string args(uint64_t ptr, int64_t n) {
  std::string bytes(16, '\0');
  std::memcpy(bytes.data(), &ptr, 8);
  std::memcpy(bytes.data() + 8, &n, 8);
  return bytes;
}

struct StaticRun {
  TraceBuilder run{1};
  RankTraceBuilder& r = run.rank(0);
  StreamId a = r.stream("stream A"), b = r.stream("stream B");
  uint64_t buf = r.alloc(1 << 20, "buf");
  std::filesystem::path json = fresh_dir().string() + ".json";
  StaticRun() { std::ofstream(json) << kKernelsJson; }
  ~StaticRun() { std::filesystem::remove(json); }
  AnalysisResult analyze() {
    AnalysisOptions o;
    o.kernels = json.string();
    return analyze_run(run, o);
  }
};

}  // namespace

TEST_CASE("static tier: a summarised kernel's extent comes from its arguments", "[static]") {
  StaticRun t;
  t.r.kernel_with_params(t.a, "_Z4fillPfl", args(t.buf, 256));      // writes [buf, buf + 1 KiB)
  t.r.memcpy(t.b, t.buf + 4096, t.buf + 8192, 512);                 // elsewhere: no race
  t.r.memcpy(t.b, t.buf + 512, t.buf + 8192, 512);                  // inside: a race
  const AnalysisResult res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  const Finding& f = res.findings[0];
  CHECK(f.kind == FindingKind::Race);
  CHECK(f.first.name == "_Z4fillPfl");
  CHECK(f.tier == FootprintTier::Static);
  CHECK(f.buffer.offset == 512);
  CHECK(res.kernels_by_tier[size_t(FootprintTier::Static)] == 1);
}

TEST_CASE("static tier: an unknown extent covers the rest of the allocation", "[static]") {
  StaticRun t;
  t.r.kernel_with_params(t.a, "_Z5scalePf", args(t.buf + 1024, 0));
  t.r.memset(t.b, t.buf + 900000, 16);  // far past the pointer, same allocation
  const AnalysisResult res = t.analyze();
  REQUIRE(res.findings.size() == 1);
  CHECK_FALSE(res.findings[0].exact);
}

TEST_CASE("static tier: without argument bytes the summary is unused and counted", "[static]") {
  StaticRun t;
  t.r.kernel(t.a, "_Z4fillPfl");  // traced at the api tier: no argument bytes
  const AnalysisResult res = t.analyze();
  CHECK(res.findings.empty());
  CHECK(res.kernels_summary_unused == 1);
  CHECK(res.operations_without_footprint == 1);
  REQUIRE_FALSE(res.warnings.empty());
  CHECK(res.warnings.back().find("--footprints static") != std::string::npos);
}

TEST_CASE("static tier: a bad kernels.json is an error naming the file", "[static]") {
  StaticRun t;
  std::ofstream(t.json) << R"({"format": "streamhaz-kernels", "version": 1, "kernels": [{"name": 3}]})";
  AnalysisOptions o;
  o.kernels = t.json.string();
  CHECK_THROWS_WITH(analyze_run(t.run, o), Catch::Contains(t.json.filename().string()));
}
