// libFuzzer target for the analyzer: traces whose records decode but are hostile (ids never
// created, accesses before any kernel, wrapping address ranges, collectives with absurd
// nranks, captures never ended...) end in a result or a TraceError, never in a crash, a hang,
// exhausted memory or a sanitizer report. Built with clang (-fsanitize=fuzzer,address,undefined).
//
// Two input shapes:
//  - bytes starting with the trace magic "SHZTRACE" are one trace file, analysed as is;
//  - anything else is a program: the first byte picks the number of ranks and options, then
//    each byte picks a record kind (and its rank) and the following bytes its field values.
//    The records are written with ChunkEncoder, so nearly every input reaches the analyzer.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"
#include "streamhaz/trace/reader.h"
#include "streamhaz/trace/writer.h"

namespace {

using namespace streamhaz::trace;

class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return i_ >= n_; }
  uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
  uint64_t raw(int bytes) {
    uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v |= uint64_t(u8()) << (8 * k);
    return v;
  }
  // Ids: mostly a handful of small ones (so records refer to each other), sometimes hostile.
  uint32_t id() {
    const uint8_t b = u8();
    if (b < 0xf0) return b % 6;
    switch (b & 7) {
      case 0: return UINT32_MAX;
      case 1: return 1u << 16;
      case 2: return (1u << 16) - 1;
      case 3: return 1u << 31;
      default: return static_cast<uint32_t>(raw(4));
    }
  }
  // Sizes and counts: small multiples of 16, or edge values.
  uint64_t size() {
    const uint8_t b = u8();
    if (b < 0xe0) return (b % 32) * 16;
    switch (b & 7) {
      case 0: return 0;
      case 1: return UINT64_MAX;
      case 2: return 1ull << 63;
      case 3: return 1ull << 32;
      case 4: return UINT64_MAX - 15;
      default: return raw(8);
    }
  }
  // Addresses: inside a few small "allocations", or near the ends of the address space.
  uint64_t ptr() {
    const uint8_t b = u8();
    if (b < 0xe0) return 0x10000 + (b % 4) * 0x1000 + (b / 4 % 16) * 16;
    switch (b & 7) {
      case 0: return 0;
      case 1: return UINT64_MAX - 15;
      case 2: return UINT64_MAX;
      case 3: return 1ull << 63;
      default: return raw(8);
    }
  }
  uint64_t seq(uint64_t& last) {
    const uint8_t b = u8();
    if (b < 0xf0) return last += 1 + (b & 3);
    switch (b & 3) {
      case 0: return last;  // repeats the previous seq
      case 1: return last = UINT64_MAX - (b >> 2 & 3);
      default: return last = raw(8);
    }
  }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

struct RankFile {
  ChunkEncoder chunk;
  std::string bytes;
  uint64_t seq = 0;
  uint64_t records = 0;
  void add(const Record& r) {
    chunk.add(r);
    ++records;
  }
};

Record make_record(Bytes& in, uint8_t kind, RankFile& f, int rank) {
  OpCommon op;
  auto common = [&] {
    op.seq = in.seq(f.seq);
    op.stream = in.id();
    op.nvtx = in.id();
    return op;
  };
  switch (kind) {
    case 0: {
      static const char* texts[] = {"", "compute", "_Z4gradPfi", "a/b/c"};
      return StringDef{in.id(), texts[in.u8() % 4]};
    }
    case 1: return Meta{in.u8() & 1 ? "{\"nccl_version\": \"2.21\"}" : "{}"};
    case 2: return HostThread{uint64_t(in.u8() % 3)};
    case 3: {
      StreamCreate r{in.seq(f.seq), in.id(), static_cast<uint32_t>(in.u8() % 3), static_cast<uint32_t>(in.u8() % 8)};
      r.priority = static_cast<int8_t>(in.u8());
      return r;
    }
    case 4: return StreamName{in.id(), in.id()};
    case 5: return EventCreate{in.id(), in.u8()};
    case 6: return EventRecord{in.seq(f.seq), in.id(), in.id()};
    case 7: return EventWait{in.seq(f.seq), in.id(), in.id()};
    case 8: return EventSync{in.seq(f.seq), in.id()};
    case 9: return EventQuery{in.seq(f.seq), in.id(), bool(in.u8() & 1)};
    case 10: return StreamSync{in.seq(f.seq), in.id()};
    case 11: return StreamQuery{in.seq(f.seq), in.id(), bool(in.u8() & 1)};
    case 12: return DeviceSync{in.seq(f.seq), static_cast<uint32_t>(in.u8() % 3)};
    case 13: {
      Kernel k;
      k.op = common();
      k.name = in.id();
      return k;
    }
    case 14: {
      Memcpy m;
      m.op = common();
      m.dst = in.ptr();
      m.src = in.ptr();
      m.width = in.size();
      const uint8_t shape = in.u8();
      if (shape & 1) {
        m.rows = in.size();
        m.dst_pitch = in.size();
        m.src_pitch = in.size();
      }
      m.kind = static_cast<MemcpyKind>((shape >> 1) % kMemcpyKindCount);
      m.flags = (shape >> 4) & 3;
      return m;
    }
    case 15: {
      Memset m;
      m.op = common();
      m.dst = in.ptr();
      m.width = in.size();
      const uint8_t shape = in.u8();
      if (shape & 1) {
        m.rows = in.size();
        m.pitch = in.size();
      }
      m.flags = (shape >> 1) & 1;
      return m;
    }
    case 16: return HostFunc{common()};
    case 17: {
      Nccl n;
      n.op = common();
      const uint8_t shape = in.u8();
      n.kind = static_cast<NcclKind>(shape % kNcclKindCount);
      n.sendbuf = in.ptr();
      n.recvbuf = in.ptr();
      n.count = in.size();
      n.elem_bytes = static_cast<uint8_t>(1u << (in.u8() % 4));
      const uint8_t b = in.u8();
      n.peer = b < 0xf0 ? static_cast<int32_t>(b % 3) - 1 : static_cast<int32_t>(in.raw(4));
      n.comm = in.u8() % 3;
      const uint8_t nr = in.u8();
      n.nranks = nr < 0xf0 ? nr % 4 : nr & 1 ? UINT32_MAX : 1u << 31;
      n.rank = shape & 0x80 ? in.id() : static_cast<uint32_t>(rank);
      const uint8_t cs = in.u8();
      n.comm_seq = cs < 0xf0 ? cs % 8 : in.raw(8);
      return n;
    }
    case 18: {
      Alloc a;
      a.seq = in.seq(f.seq);
      a.ptr = in.ptr();
      const uint8_t b = in.u8();
      a.bytes = b < 0xc0 ? 0x1000 : in.size();
      a.device = b % 2;
      a.kind = static_cast<AllocKind>(in.u8() % kAllocKindCount);
      a.stream = in.id();
      return a;
    }
    case 19: {
      Free r;
      r.seq = in.seq(f.seq);
      r.ptr = in.ptr();
      r.kind = static_cast<AllocKind>(in.u8() % kAllocKindCount);
      r.stream = in.id();
      return r;
    }
    case 20: return BufferName{in.ptr(), in.size(), in.id()};
    case 21: {
      Access a;
      const uint8_t b = in.u8();
      a.op_seq = b < 0xc0 ? f.seq - (b % 4) : in.raw(8);
      a.ptr = in.ptr();
      a.bytes = in.size();
      a.mode = static_cast<AccessMode>(1 + b % 3);
      a.tier = static_cast<FootprintTier>((b >> 2) % kFootprintTierCount);
      return a;
    }
    case 22: return CaptureBegin{in.seq(f.seq), in.id(), GraphId(in.u8() % 4)};
    case 23: return CaptureEnd{in.seq(f.seq), in.id(), GraphId(in.u8() % 4)};
    case 24: {
      GraphLaunch g;
      g.op = common();
      const uint8_t b = in.u8();
      g.graph = b < 0xf0 ? b % 4 : in.raw(8);
      return g;
    }
    default: {
      Timing t;
      const uint8_t b = in.u8();
      t.op_seq = b < 0xc0 ? f.seq - (b % 8) : in.raw(8);
      t.start_ns = in.size();
      t.end_ns = t.start_ns + in.size();
      return t;
    }
  }
}

// One memory file per rank, reused across inputs.
std::string memfile(int index, const std::string& bytes) {
  static int fds[2] = {memfd_create("streamhaz-fuzz-0", 0), memfd_create("streamhaz-fuzz-1", 0)};
  const int fd = fds[index];
  if (fd < 0) return {};
  if (ftruncate(fd, 0) != 0 || pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    return {};
  return "/proc/self/fd/" + std::to_string(fd);
}

void run_analysis(const std::vector<std::string>& paths, const streamhaz::analysis::AnalysisOptions& options) {
  for (const std::string& p : paths)
    if (p.empty()) return;
  try {
    streamhaz::analysis::analyze(paths, options);
  } catch (const TraceError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 8 && std::memcmp(data, "SHZTRACE", 8) == 0) {
    run_analysis({memfile(0, std::string(reinterpret_cast<const char*>(data), size))}, {});
    return 0;
  }
  Bytes in(data, size);
  const uint8_t setup = in.u8();
  const int nranks = 1 + (setup & 1);
  streamhaz::analysis::AnalysisOptions options;
  options.per_thread_host = setup & 2;
  RankFile files[2];
  for (int r = 0; r < nranks; ++r) {
    nlohmann::json header = {{"format", "streamhaz-trace"}, {"version", kFormatVersion}, {"world_size", nranks}};
    if (!(setup & 4)) header["rank"] = setup & 8 ? 0 : r;  // absent, repeated or distinct ranks
    files[r].bytes = encode_file_header(header);
  }
  while (!in.empty()) {
    const uint8_t b = in.u8();
    const int r = nranks == 2 ? b >> 7 : 0;
    const uint8_t kind = b & 0x7f;
    if (kind >= 0x60) {  // a chunk boundary: the delta state starts over
      if (!files[r].chunk.empty()) files[r].chunk.finish_into(files[r].bytes);
      continue;
    }
    files[r].add(make_record(in, kind % 26, files[r], r));
  }
  std::vector<std::string> paths;
  for (int r = 0; r < nranks; ++r) {
    RankFile& f = files[r];
    if (!(setup & 16)) f.chunk.add(End{f.records});  // else: cut off, as a killed rank
    if (!f.chunk.empty()) f.chunk.finish_into(f.bytes);
    paths.push_back(memfile(r, f.bytes));
  }
  run_analysis(paths, options);
  return 0;
}
