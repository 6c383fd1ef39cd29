// Writes a few valid traces as the fuzzer's starting corpus, so it mutates real chunks
// instead of first having to discover the file magic.
#include <filesystem>
#include <string>

#include "streamhaz/testing/trace_builder.h"

int main(int argc, char** argv) {
  using namespace streamhaz::trace;
  if (argc != 2) return 2;
  std::string dir = argv[1];
  std::filesystem::remove_all(dir);  // libFuzzer adds to it: start each run from the seeds
  std::filesystem::create_directories(dir);
  TraceBuilder run(2);
  for (int rank = 0; rank < 2; ++rank) {
    auto& r = run.rank(rank);
    // Stacks (format version 3): a native frame in a module under Python frames.
    const ModuleId lib = r.module("/usr/lib/libexample.so", 0x7f0000000000, 0x10000, "0123abcd");
    r.use_stack(r.stack({native(lib, 0x1234), py("train.py", 42, "step"), py("train.py", 7, "main")}));
    StreamId compute = r.stream("compute stream", false);
    StreamId comm = r.stream("reduction stream");
    uint64_t buf = r.alloc(1 << 16, "ipg_buffer[0]");
    EventId e = r.event();
    r.push_range("average_tensor");
    r.kernel(compute, "_Z4gradPfi", {writes(buf, 4096)});
    r.memcpy(compute, buf + 4096, buf, 4096);
    r.record(e, compute);
    r.wait(comm, e);
    r.use_stack(r.stack({py("train.py", 50, "reduce"), py("train.py", 7, "main")}));
    r.all_reduce(comm, buf, buf, 2048, TraceBuilder::comm(0));
    r.pop_range();
    r.memcpy_sync(buf, 0x100000, 64, MemcpyKind::HostToDevice, true);
    r.stream_sync(comm);
    r.free(buf);
  }
  run.write_dir(dir);
  return 0;
}
