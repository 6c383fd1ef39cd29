// The Perfetto export of a builder-written 2-rank run: tracks, NVTX slices, flows for the event
// wait, the NCCL match and the finding's missing order, a marker per finding.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/report/perfetto_export.h"
#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"

namespace fs = std::filesystem;
using namespace streamhaz;
using namespace streamhaz::trace;
using nlohmann::json;

TEST_CASE("perfetto export: tracks, NVTX ranges, flows and finding markers") {
  TraceBuilder run(2);
  for (int rank = 0; rank < 2; ++rank) {
    auto& r = run.rank(rank);
    const StreamId compute = r.stream("compute stream"), reduction = r.stream("reduction stream \xFF");
    const uint64_t buf = r.alloc(4096, "ipg_buffer[0]"), src = r.alloc(4096);
    r.push_range("backward");
    r.memcpy(compute, buf, src, 4096);
    const EventId e = r.event();
    r.record(e, compute);
    r.wait(reduction, e);
    r.push_range("average_tensor");
    r.all_reduce(reduction, buf, buf, 1024, TraceBuilder::comm(0));
    r.pop_range();
    r.memcpy(compute, buf, src, 4096);  // races with the all-reduce: no wait for it
    r.pop_range();
  }
  const auto dir = fs::temp_directory_path() / ("streamhaz-perfetto-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  run.write_dir(dir.string());
  const auto result = analysis::analyze(expand_trace_paths({dir.string()}));
  const auto timeline = report::load_timeline(result.traces);
  fs::remove_all(dir);
  REQUIRE_FALSE(result.findings.empty());

  std::ostringstream out;
  const auto stats = report::write_perfetto_trace(out, timeline, result.findings);
  const json doc = json::parse(out.str());  // throws on invalid UTF-8 or syntax
  const auto& events = doc.at("traceEvents");

  std::set<std::string> process_names, thread_names, nvtx;
  std::map<std::string, std::map<uint64_t, std::string>> flows;  // cat -> id -> phases
  uint64_t ops = 0, instants = 0;
  for (const json& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e["name"] == "process_name") process_names.insert(e["args"]["name"].get<std::string>());
    if (ph == "M" && e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
    if (ph == "X" && e["cat"] == "nvtx") nvtx.insert(e["name"].get<std::string>());
    else if (ph == "X") ++ops;
    if (ph == "s" || ph == "f") flows[e["cat"]][e["id"]] += ph;
    if (ph == "f") CHECK(e["bp"] == "e");
    if (ph == "i") {
      ++instants;
      CHECK(e["s"] == "t");
    }
  }
  CHECK(process_names.size() == 2);
  CHECK(thread_names.count("compute stream (id 1)"));
  CHECK(thread_names.count("reduction stream \xEF\xBF\xBD (id 2)"));  // invalid byte replaced
  CHECK(nvtx == std::set<std::string>{"backward", "average_tensor"});
  CHECK(ops == 6);
  CHECK(instants == result.findings.size());
  CHECK(stats.instants == instants);
  CHECK(flows["wait"].size() == 2);       // one event wait per rank
  CHECK(flows["nccl"].size() == 1);       // the all-reduce matched across the two ranks
  CHECK(flows["finding"].size() == result.findings.size());
  for (const auto& [cat, ids] : flows)
    for (const auto& [id, phases] : ids) CHECK(phases == "sf");
}
