// A file cut at any byte after its header reads up to its last whole chunk and reports
// itself truncated; cut inside the header it is an error.
#include <catch2/catch.hpp>

#include "sample_records.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/writer.h"

using namespace streamhaz::trace;
using namespace streamhaz::trace::testing;

namespace {

struct WrittenTrace {
  std::string bytes;
  std::vector<Record> records;
  std::vector<size_t> chunk_ends;     // file offset after each chunk
  std::vector<size_t> records_before; // records in the chunks up to and including each one
  size_t header_end = 0;
};

WrittenTrace write_small_chunks(size_t n) {
  WrittenTrace t;
  t.records = many_records(n);
  t.bytes = encode_file_header(test_header());
  t.header_end = t.bytes.size();
  ChunkEncoder chunk;
  for (size_t i = 0; i < t.records.size(); ++i) {
    chunk.add(t.records[i]);
    if (chunk.payload_bytes() >= 120 || i + 1 == t.records.size()) {
      chunk.finish_into(t.bytes);
      t.chunk_ends.push_back(t.bytes.size());
      t.records_before.push_back(i + 1);
    }
  }
  // No End record: this models a killed process even when not cut.
  return t;
}

// Records in the chunks that end at or before `cut`.
size_t whole_chunk_records(const WrittenTrace& t, size_t cut) {
  size_t records = 0;
  for (size_t c = 0; c < t.chunk_ends.size() && t.chunk_ends[c] <= cut; ++c) records = t.records_before[c];
  return records;
}

}  // namespace

TEST_CASE("a trace cut at every byte reads its whole chunks and says it is truncated", "[format][truncation]") {
  WrittenTrace t = write_small_chunks(300);
  REQUIRE(t.chunk_ends.size() > 10);
  std::string path = temp_path("cut.shz");
  for (size_t cut = t.header_end; cut <= t.bytes.size(); ++cut) {
    write_file(path, t.bytes.substr(0, cut));
    INFO("cut at byte " << cut);
    TraceReader reader(path);
    std::vector<Record> got;
    Record r;
    REQUIRE_NOTHROW([&] { while (reader.next(r)) got.push_back(r); }());
    REQUIRE(reader.truncated());
    REQUIRE(got.size() == whole_chunk_records(t, cut));
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == t.records[i]);
  }
}

TEST_CASE("truncation messages say where the file was cut", "[format][truncation]") {
  WrittenTrace t = write_small_chunks(100);
  std::string path = temp_path("cut-msg.shz");
  size_t mid_record = t.chunk_ends[2] + 16 + 3;  // inside the payload of the fourth chunk
  write_file(path, t.bytes.substr(0, mid_record));
  TraceReader reader(path);
  Record r;
  while (reader.next(r)) {
  }
  CHECK(reader.truncated());
  CHECK_THAT(reader.truncation(), Catch::Contains("at byte " + std::to_string(t.chunk_ends[2])));
  CHECK_THAT(reader.truncation(), Catch::Contains("cut off inside a chunk"));
  // The cut-off chunk's header counts the records that are lost with it.
  CHECK(reader.records_lost() == t.records_before[3] - t.records_before[2]);

  write_file(path, t.bytes.substr(0, t.chunk_ends[4]));  // exactly at a chunk boundary
  TraceReader at_boundary(path);
  while (at_boundary.next(r)) {
  }
  CHECK(at_boundary.truncated());
  CHECK_THAT(at_boundary.truncation(), Catch::Contains("without its end record"));
  CHECK(at_boundary.records_lost() == 0);  // nothing in the file says what came after
}

TEST_CASE("a trace cut inside its header is an error naming the offset", "[format][truncation]") {
  WrittenTrace t = write_small_chunks(10);
  std::string path = temp_path("cut-header.shz");
  for (size_t cut : {size_t(0), size_t(5), size_t(15), size_t(16), t.header_end - 1}) {
    INFO("cut at byte " << cut);
    write_file(path, t.bytes.substr(0, cut));
    CHECK_THROWS_AS(TraceReader(path), TraceError);
  }
  write_file(path, t.bytes.substr(0, t.header_end - 1));
  CHECK_THROWS_WITH(TraceReader(path), Catch::Contains("at byte 16") && Catch::Contains("cut off inside"));
}

TEST_CASE("a writer abandoned mid-run leaves a readable truncated trace", "[format][truncation]") {
  std::string path = temp_path("abandoned.shz");
  std::vector<Record> records = many_records(1000);
  TraceFileWriter::Options o;
  o.chunk_bytes = 1000;
  TraceFileWriter w(path, test_header(), o);
  for (const Record& r : records) w.add(r);
  w.abandon();  // the last partial chunk is lost, as with SIGKILL
  TraceReader reader(path);
  Record r;
  size_t n = 0;
  while (reader.next(r)) REQUIRE(r == records[n++]);
  CHECK(reader.truncated());
  CHECK(n > 0);
  CHECK(n < records.size());
}

TEST_CASE("a trace whose tracer stepped aside ends cleanly but reads as truncated, with why and where",
          "[format][truncation]") {
  std::string path = temp_path("stepped_aside.shz");
  {
    TraceFileWriter w(path, test_header());
    for (const Record& r : many_records(50)) w.add(r);
    w.add(Meta{R"({"unobserved":{"from_seq":4242,"reason":"libtorch_cpu.so subscribed to CUPTI"}})"});
    w.close();
  }
  TraceReader reader(path);
  Record r;
  while (reader.next(r)) {
  }
  CHECK(reader.truncated());
  CHECK_THAT(reader.truncation(), Catch::Contains("stopped observing the run at call #4242") &&
                                      Catch::Contains("libtorch_cpu.so subscribed to CUPTI"));
  CHECK(reader.records_lost() == 0);
}

TEST_CASE("a trace whose tracer missed calls for a while reads as truncated, naming the span", "[format][truncation]") {
  std::string path = temp_path("wrappers_bypassed.shz");
  {
    TraceFileWriter w(path, test_header());
    for (const Record& r : many_records(50)) w.add(r);
    w.add(Meta{R"({"unobserved":{"from_seq":7,"to_seq":4242,"reason":"calls around the wrappers"}})"});
    w.close();
  }
  TraceReader reader(path);
  Record r;
  while (reader.next(r)) {
  }
  CHECK(reader.truncated());
  CHECK(reader.unobserved());
  CHECK_THAT(reader.truncation(), Catch::Contains("calls between #7 and #4242 may be missing") &&
                                      Catch::Contains("calls around the wrappers") &&
                                      !Catch::Contains("the rest of the run"));
}
