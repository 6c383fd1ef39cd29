#include "sample_records.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "streamhaz/trace/reader.h"

namespace streamhaz::trace::testing {

std::vector<Record> one_of_each_kind() {
  Kernel k;
  k.op = {101, 3, 7};
  k.name = 9;
  k.grid[0] = 1024; k.grid[1] = 2; k.grid[2] = 1;
  k.block[0] = 256;
  k.shared_mem = 49152;
  k.params = std::string("\x00\x10\x00\x00\xff\x7f\x00\x00", 8);
  Memcpy m2d;
  m2d.op = {102, 3, 0};
  m2d.dst = 0x7f0000001000; m2d.src = 0x100000000;
  m2d.width = 512; m2d.rows = 4; m2d.dst_pitch = 1024; m2d.src_pitch = 512;
  m2d.kind = MemcpyKind::HostToDevice;
  m2d.flags = kMemSync | kMemPageableHost;
  Memcpy m;
  m.op = {103, 4, 7};
  m.dst = 0x7f0000000000; m.src = 0x7f0000100000; m.width = 1 << 20;
  Memset ms;
  ms.op = {104, 4, 0};
  ms.dst = 0x7f0000000100; ms.width = 64; ms.value = 0xab;
  Memset ms2d = ms;
  ms2d.rows = 3; ms2d.pitch = 128;
  Nccl n;
  n.op = {105, 5, 12};
  n.kind = NcclKind::ReduceScatter;
  n.sendbuf = 0x7f0000200000; n.recvbuf = 0x7f0000300000; n.count = 4096;
  n.dtype = 6; n.elem_bytes = 2; n.redop = 0; n.peer = -1;
  n.comm = 0xdeadbeefcafef00d; n.rank = 1; n.nranks = 4; n.comm_seq = 77;
  return {
      StringDef{9, "_Z10layer_gradPfi"},
      StringDef{7, "backward/average_tensor"},
      Meta{R"({"nccl_version":"2.28.3"})"},
      HostThread{4242},
      StreamCreate{100, 3, 1, kStreamNonBlocking, -1, 0x55550000},
      StreamName{3, 9},
      EventCreate{2, 2},
      ModuleDef{1, 7, 0x7f1200000000, 0x4000000, 9},
      FrameDef{1, FrameKind::Python, 7, 9, 423, 0, 0},
      FrameDef{2, FrameKind::Native, 0, 0, 0, 1, 0x1a2b3c},
      CallsiteDef{1, 0, 1},
      CallsiteDef{2, 1, 2},
      k,
      Access{101, 0x7f0000000000, 4096, AccessMode::ReadWrite, FootprintTier::Static},
      StackRef{101, 2},
      m2d,
      m,
      ms,
      ms2d,
      n,
      HostFunc{{106, 3, 0}},
      EventRecord{107, 2, 3},
      EventWait{108, 4, 2},
      EventSync{109, 2},
      EventQuery{110, 2, true},
      StreamSync{111, 3},
      StreamQuery{112, 4, false},
      DeviceSync{113, 1},
      Alloc{114, 0x7f0000400000, 1 << 24, 1, AllocKind::Async, 4},
      Free{115, 0x7f0000400000, AllocKind::Async, 4},
      BufferName{0x7f0000000000, 4096, 9},
      CaptureBegin{116, 3, 5},
      CaptureEnd{117, 3, 5},
      GraphLaunch{{118, 3, 0}, 5},
      RangeEdge{119, 7, true},
      RangeEdge{120, 7, false},
      Timing{101, 1700000000123456789ull, 1700000000123466789ull},
      Timing{103, 1700000000123400000ull, 1700000000123410000ull},
      TensorAlloc{114, 0x7f0000400000, 1 << 20, 1, 0x55d0c0de0000, 2},
  };
}

std::vector<Record> many_records(size_t n) {
  std::vector<Record> base = one_of_each_kind(), out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Record r = base[i % base.size()];
    // Keep seqs increasing across cycles so deltas stay realistic.
    uint64_t shift = (i / base.size()) * 100;
    std::visit(
        [&](auto& rec) {
          if constexpr (requires { rec.op.seq; }) rec.op.seq += shift;
          else if constexpr (requires { rec.seq; }) rec.seq += shift;
          else if constexpr (requires { rec.op_seq; }) rec.op_seq += shift;
          else if constexpr (requires { rec.before_seq; }) rec.before_seq += shift;
        },
        r);
    out.push_back(std::move(r));
  }
  return out;
}

nlohmann::json test_header() {
  return {{"format", "streamhaz-trace"}, {"version", kFormatVersion}, {"rank", 1}, {"world_size", 2},
          {"host", "test"}, {"pid", 1}};
}

std::string temp_path(const std::string& name) {
  // One folder per test process, removed when it exits.
  struct ProcessDir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("streamhaz-format-tests-" + std::to_string(getpid()));
    ~ProcessDir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const ProcessDir process_dir;
  const std::filesystem::path& dir = process_dir.path;
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

std::vector<Record> read_all(const std::string& path) {
  TraceReader reader(path);
  std::vector<Record> out;
  Record r;
  while (reader.next(r)) out.push_back(r);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace streamhaz::trace::testing
