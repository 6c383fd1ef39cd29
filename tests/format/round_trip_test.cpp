#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "sample_records.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/record_json.h"
#include "streamhaz/trace/writer.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;

TEST_CASE("every record kind survives a write and a read", "[format][round-trip]") {
  std::vector<Record> records = one_of_each_kind();
  std::string path = temp_path("all-kinds.shz");
  {
    TraceFileWriter w(path, test_header());
    for (const Record& r : records) w.add(r);
    w.close();
  }
  TraceReader reader(path);
  CHECK(reader.rank() == 1);
  CHECK(reader.world_size() == 2);
  std::vector<Record> back;
  Record r;
  while (reader.next(r)) back.push_back(r);
  REQUIRE(back.size() == records.size() + 1);  // + End
  CHECK(std::get<End>(back.back()).records == records.size());
  back.pop_back();
  for (size_t i = 0; i < records.size(); ++i) {
    INFO("record " << i << " (" << record_name(records[i]) << ")");
    CHECK(back[i] == records[i]);
  }
  CHECK(reader.clean_end());
  CHECK_FALSE(reader.truncated());
  // Meta records are merged into the header.
  CHECK(reader.header().at("nccl_version") == "2.28.3");
}

TEST_CASE("the record kinds cover every variant alternative", "[format]") {
  std::vector<Record> records = one_of_each_kind();
  std::vector<bool> seen(kRecordKindCount, false);
  for (const Record& r : records) seen[r.index()] = true;
  seen[Record(End{}).index()] = true;  // End is written by close()
  for (size_t i = 0; i < seen.size(); ++i) {
    INFO(record_name(i));
    CHECK(seen[i]);
  }
}

TEST_CASE("records spread over many small chunks read back in order", "[format][round-trip]") {
  std::vector<Record> records = many_records(5000);
  std::string path = temp_path("many.shz");
  TraceFileWriter::Options o;
  o.chunk_bytes = 300;
  {
    TraceFileWriter w(path, test_header(), o);
    for (const Record& r : records) w.add(r);
  }  // destructor closes cleanly
  TraceReader reader(path);
  Record r;
  size_t i = 0;
  while (reader.next(r) && !std::holds_alternative<End>(r)) {
    REQUIRE(i < records.size());
    REQUIRE(r == records[i]);
    ++i;
  }
  CHECK(i == records.size());
  CHECK(reader.chunks_read() > 50);
}

TEST_CASE("a run of pointer accesses is written as add() writes each Access", "[format]") {
  const std::vector<uint64_t> ptrs{0x7f0000001000, 0x7f0000000100, UINT64_MAX - 7, 8, 0x7f0000001000};
  const std::vector<AccessMode> modes{AccessMode::Read, AccessMode::Write, AccessMode::ReadWrite, AccessMode::Read,
                                      AccessMode::Write};
  for (uint64_t op_seq : {uint64_t{1}, uint64_t{1} << 40}) {
    ChunkEncoder one_by_one, batch;
    for (ChunkEncoder* e : {&one_by_one, &batch}) e->add(Kernel{});  // delta state that is not zero
    for (size_t i = 0; i < ptrs.size(); ++i)
      one_by_one.add(Access{op_seq, ptrs[i], 0, modes[i], FootprintTier::Pointer});
    batch.add_pointer_accesses(op_seq, ptrs, modes, FootprintTier::Pointer);
    batch.add_pointer_accesses(op_seq, {}, {}, FootprintTier::Pointer);
    CHECK(batch.record_count() == one_by_one.record_count());
    std::string a, b;
    one_by_one.finish_into(a);
    batch.finish_into(b);
    CHECK(a == b);
  }
}

TEST_CASE("the writer refuses to overwrite an existing file unless asked", "[format]") {
  std::string path = temp_path("exists.shz");
  write_file(path, "user data");
  CHECK_THROWS_WITH(TraceFileWriter(path, test_header()), Catch::Contains("refusing to overwrite"));
  CHECK(read_file(path) == "user data");
  TraceFileWriter::Options o;
  o.overwrite = true;
  TraceFileWriter w(path, test_header(), o);
  w.close();
  CHECK(read_all(path).size() == 1);
}

TEST_CASE("records export as JSON with their field names", "[format][json]") {
  Nccl n;
  for (const Record& r : one_of_each_kind())
    if (const auto* x = std::get_if<Nccl>(&r)) n = *x;
  nlohmann::json j = to_json(n);
  CHECK(j.at("type") == "nccl");
  CHECK(j.at("kind") == "ncclReduceScatter");
  CHECK(j.at("sendbuf") == "0x7f0000200000");
  CHECK(j.at("count") == 4096);
  CHECK(j.at("comm_seq") == 77);
  CHECK(j.at("peer") == -1);
}

TEST_CASE("NCCL footprints follow the collective's semantics", "[format][footprint]") {
  Nccl n;
  n.count = 100;
  n.elem_bytes = 4;
  n.nranks = 4;
  n.rank = 2;
  n.kind = NcclKind::AllReduce;
  CHECK(nccl_footprint(n).read_bytes == 400);
  CHECK(nccl_footprint(n).write_bytes == 400);
  n.kind = NcclKind::ReduceScatter;
  CHECK(nccl_footprint(n).read_bytes == 1600);
  CHECK(nccl_footprint(n).write_bytes == 400);
  n.kind = NcclKind::AllGather;
  CHECK(nccl_footprint(n).read_bytes == 400);
  CHECK(nccl_footprint(n).write_bytes == 1600);
  n.kind = NcclKind::Broadcast;
  n.peer = 0;
  CHECK(nccl_footprint(n).read_bytes == 0);  // not the root
  CHECK(nccl_footprint(n).write_bytes == 400);
  n.peer = 2;
  CHECK(nccl_footprint(n).read_bytes == 400);
}

TEST_CASE("every NCCL kind has its API name and a footprint from its table row", "[format][footprint]") {
  CHECK(std::string(to_string(NcclKind::AllToAll)) == "ncclAlltoAll");  // as NCCL spells it
  CHECK(std::string(nccl_facts(NcclKind::AllToAll).short_name) == "AlltoAll");
  Nccl n;
  n.count = 10;
  n.elem_bytes = 2;
  n.nranks = 3;
  n.rank = 1;
  n.peer = 1;  // this rank is the root of rooted calls
  for (uint8_t k = 0; k < kNcclKindCount; ++k) {
    n.kind = static_cast<NcclKind>(k);
    const NcclKindFacts& f = nccl_facts(n.kind);
    INFO(f.api_name);
    CHECK(std::string(f.api_name).rfind("nccl", 0) == 0);
    const NcclFootprint fp = nccl_footprint(n);
    // Every call touches something, and nothing beyond count x nranks elements.
    CHECK(fp.read_bytes + fp.write_bytes > 0);
    CHECK(fp.read_bytes <= 60);
    CHECK(fp.write_bytes <= 60);
  }
  n.kind = NcclKind::Gather;
  n.peer = 0;  // not the root: sends, receives nothing
  CHECK(nccl_footprint(n).write_bytes == 0);
}

TEST_CASE("footprint tiers: one row each, precision and coverage places distinct", "[format]") {
  std::set<int> precision, coverage;
  for (const FootprintTierFacts& t : kFootprintTiers) {
    INFO(t.name);
    CHECK(precision.insert(t.precision).second);
    if (t.coverage_order) CHECK(coverage.insert(t.coverage_order).second);
  }
  CHECK(std::string(to_string(FootprintTier::Coarse)) == "coarse");
  CHECK_FALSE(tier_facts(FootprintTier::Coarse).exact_ranges);
  CHECK(tier_facts(FootprintTier::Pointer).coverage_order == 0);  // counted apart: "pointer only"
}
