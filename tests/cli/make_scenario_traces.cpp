// Writes the trace folders the CLI end-to-end tests run `streamhaz check` on:
//   racy/       2 ranks, the ZeRO-2 IPG bucket race (DeepSpeed #5523): the compute stream copies
//               the next gradients into ipg_buffer[0] while the reduction stream may still be
//               all-reducing it
//   clean/      the same step with one event per buffer: the copy waits for the all-reduce
//   racy4/      racy on 4 ranks
//   stacks/     racy with call stacks: Python frames of a DeepSpeed-like program, torch frames
//               and a native frame to fold, an unnamed pool of streams made by one call
//   bad/        rank0.shz with one byte of its first chunk flipped (checksum mismatch)
//   truncated/  rank0.shz of racy intact, rank1.shz cut off inside a chunk
//   truncated-clean/  the same cut of clean: no finding, but part of the run went unchecked
//   stepped-aside/  clean, but rank 1's tracer stepped aside for another CUPTI client (a
//               profiler): its trace ends cleanly and says from which call it saw nothing
//   wrappers-bypassed/  clean, but rank 0's driver wrappers were found bypassed by an audit: its
//               trace says which calls may be missing (an unobserved span, recorded again after);
//               rank 1's GPU times ended after the steps of its repeating calls (no step range)
//   latin1/     1 rank, a race between kernels whose stream and kernel names are not UTF-8;
//               its header says GPU times were sampled, and holds the tracer's self-profile
//   hostile/    1 rank whose host, command, device and stream names hold ESC sequences, a C1
//               CSI (U+009B), a bidirectional override and a newline that forges a line, and a
//               self-profile of wrong types and a thread name that forges a line
//   evil-name/  a corrupt trace whose file name holds a newline and a forged message
//   existing.txt  a file `check --output` must not overwrite without --force
//   nranks-bomb/  1 rank, 16 all-reduces on a communicator claiming 2^32 - 1 ranks (a trace
//               value that must not size what the analysis allocates), as its rank 5
//   long-name/  1 rank, a race of a kernel whose name is 100 KiB long
//   name-bomb/  1 rank, 4,000 distinct names of 64 KiB each (256 MiB once read, under 1 MB
//               on disk): more than a memory-limited check can hold
//   hostile-sync/  clean with stream names that hold ESC sequences and a forged line, so that
//               the minimal synchronisation's advice names them
//   evil-truncated/  truncated-clean with rank 1 named with a newline and a forged line
//   truncated-untimed/  1 rank whose only chunk was cut off: no record, no GPU time left
//   bad-version/  1 rank whose header "version" is a string
//   earlier-run/  rank0.shz, standing for a trace `streamhaz run --out` must not delete unasked
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "streamhaz/testing/trace_builder.h"
#include "streamhaz/trace/reader.h"

namespace fs = std::filesystem;
using namespace streamhaz::trace;

namespace {

constexpr uint64_t kBucketBytes = 4096;
const char* const kGradKernel = "void layer_grad<float, 2>(float*, int)";

// One rank of the overlapped step; `event_per_buffer` adds the wait that fixes the race.
void zero2_step(RankTraceBuilder& r, bool event_per_buffer, const std::string& compute_name = "compute stream",
                const std::string& reduction_name = "reduction stream") {
  StreamId compute = r.stream(compute_name);
  StreamId reduction = r.stream(reduction_name);
  uint64_t grads = r.alloc(2 * kBucketBytes, "grads");
  uint64_t ipg = r.alloc(kBucketBytes, "ipg_buffer[0]");

  r.push_range("backward");
  r.kernel(compute, kGradKernel, {writes(grads, kBucketBytes)});
  r.memcpy(compute, ipg, grads, kBucketBytes);
  EventId copied = r.event();
  r.record(copied, compute);
  r.wait(reduction, copied);  // the reduction waits for the copy (DeepSpeed 0.8.0-0.14.2 did this)
  r.push_range("average_tensor");
  r.all_reduce(reduction, ipg, ipg, kBucketBytes / 4, TraceBuilder::comm(0));
  r.pop_range();
  if (event_per_buffer) {
    EventId reduced = r.event();
    r.record(reduced, reduction);
    r.wait(compute, reduced);  // ...but only the fix makes the next copy wait for the reduction
  }
  r.kernel(compute, kGradKernel, {writes(grads + kBucketBytes, kBucketBytes)});
  r.memcpy(compute, ipg, grads + kBucketBytes, kBucketBytes);
  r.pop_range();
  r.device_sync();
}

// The racy step with the stacks a traced PyTorch program would have (format version 3).
void zero2_step_with_stacks(RankTraceBuilder& r) {
  const char* stage = "/opt/venv/lib/python3.11/site-packages/deepspeed/runtime/zero/stage_1_and_2.py";
  const char* train = "/home/user/project/train.py";
  const ModuleId torch_cuda = r.module("/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
                                       0x7f2000000000, 0x4000000, "feedface");
  r.use_stack(r.stack({py("/opt/venv/lib/python3.11/site-packages/torch/cuda/streams.py", 34, "__new__"),
                       py(stage, 140, "__init__"), py(train, 20, "main")}));
  StreamId compute = r.stream("");
  StreamId reduction = r.stream("");
  r.stream("");  // the rest of the pool
  r.use_stack(r.stack({py(stage, 130, "__init__"), py(train, 20, "main")}));
  uint64_t grads = r.alloc(2 * kBucketBytes);
  uint64_t ipg = r.alloc(kBucketBytes);
  const CallsiteId copy = r.stack({native(torch_cuda, 0x1234), py("/opt/venv/lib/python3.11/site-packages/torch/"
                                                                  "_tensor.py", 9, "copy_"),
                                   py(stage, 912, "copy_grads_in_partition"), py(train, 44, "main")});
  const CallsiteId grad = r.stack({py(train, 40, "backward_step"), py(train, 44, "main")});
  r.push_range("?");  // an older tracer's unreadable range name
  r.push_range("backward");
  r.use_stack(grad);
  r.kernel(compute, kGradKernel, {writes(grads, kBucketBytes)});
  r.use_stack(copy);
  r.memcpy(compute, ipg, grads, kBucketBytes);
  EventId copied = r.event();
  r.record(copied, compute);
  r.wait(reduction, copied);
  r.push_range("average_tensor");
  r.use_stack(r.stack({py(stage, 1100, "average_tensor"), py(train, 44, "main")}));
  r.all_reduce(reduction, ipg, ipg, kBucketBytes / 4, TraceBuilder::comm(0));
  r.pop_range();
  r.use_stack(grad);
  r.kernel(compute, kGradKernel, {writes(grads + kBucketBytes, kBucketBytes)});
  r.use_stack(copy);
  r.memcpy(compute, ipg, grads + kBucketBytes, kBucketBytes);
  r.pop_range();
  r.pop_range();
  r.use_stack(0);
  r.device_sync();
}

void write_scenario(const fs::path& dir, bool event_per_buffer, int ranks = 2) {
  TraceBuilder run(ranks);
  for (int rank = 0; rank < run.world_size(); ++rank) zero2_step(run.rank(rank), event_per_buffer);
  run.write_dir(dir.string());
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_file(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

uint32_t u32_at(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_scenario_traces DIR\n";
    return 2;
  }
  const fs::path root = argv[1];
  fs::remove_all(root);
  write_scenario(root / "racy", false);
  write_scenario(root / "clean", true);
  write_scenario(root / "racy4", false, 4);
  {
    TraceBuilder run(2);
    for (int rank = 0; rank < run.world_size(); ++rank) zero2_step_with_stacks(run.rank(rank));
    run.write_dir((root / "stacks").string());
  }

  // Preamble (16 bytes, header length at 12), JSON header, then the first chunk's 16-byte head.
  std::string trace = read_file(root / "racy" / "rank0.shz");
  const size_t first_payload_byte = 16 + u32_at(trace, 12) + 16;
  std::string corrupt = trace;
  corrupt[first_payload_byte] = static_cast<char>(corrupt[first_payload_byte] ^ 0x5a);
  fs::create_directories(root / "bad");
  write_file(root / "bad" / "rank0.shz", corrupt);

  fs::create_directories(root / "truncated");
  write_file(root / "truncated" / "rank0.shz", trace);
  std::string rank1 = read_file(root / "racy" / "rank1.shz");
  write_file(root / "truncated" / "rank1.shz", rank1.substr(0, rank1.size() - 7));
  fs::create_directories(root / "truncated-clean");
  fs::copy_file(root / "clean" / "rank0.shz", root / "truncated-clean" / "rank0.shz");
  const std::string clean1 = read_file(root / "clean" / "rank1.shz");
  write_file(root / "truncated-clean" / "rank1.shz", clean1.substr(0, clean1.size() - 7));

  {
    TraceBuilder run(2);
    for (int rank = 0; rank < run.world_size(); ++rank) zero2_step(run.rank(rank), true);
    run.rank(1).add(Meta{R"({"unobserved":{"from_seq":40,"reason":"libtorch_cpu.so subscribed to CUPTI, which )"
                         R"(takes one subscriber (a profiler such as torch.profiler); the tracer gave it up"}})"});
    run.write_dir((root / "stepped-aside").string());
  }

  {
    TraceBuilder run(2);
    for (int rank = 0; rank < run.world_size(); ++rank) zero2_step(run.rank(rank), true);
    run.rank(0).add(Meta{R"({"unobserved":{"from_seq":12,"to_seq":30,"reason":"3 driver call(s) )"
                         R"((cuLaunchKernel first) reached the driver around the tracer's wrappers"}})"});
    run.rank(0).add(Meta{R"({"driver_wrappers":{"audits":3,"calls_seen_in_wrappers":150,"calls_seen_around":2}})"});
    // Rank 1 has no step range: its GPU times ended after the pattern's steps.
    run.rank(1).set_header_field("gpu_times", "steps:4");
    run.rank(1).add(Meta{R"({"gpu_times_steps_from_pattern":{"period":5,"periods":6,"seq":31}})"});
    run.write_dir((root / "wrappers-bypassed").string());
  }

  {
    TraceBuilder run(1);
    RankTraceBuilder& r = run.rank(0);
    r.set_header_field("gpu_times", "sampled:200/2000");
    r.set_header_field("tracer_profile",
                       {{"steps", 3},
                        {"phases", nlohmann::json::array({{{"name", "driver_callback"}, {"inside", ""},
                                                           {"what", "a CUPTI driver-API callback"}, {"calls", 600},
                                                           {"ns", 1200000}, {"step_calls", 300}, {"step_ns", 600000}}})},
                        {"threads", nlohmann::json::array({{{"tid", 7},
                                                            {"name", "pt_autograd_0"},
                                                            {"phases", {{"driver_callback", {600, 1200000}}}}}})}});
    r.set_header_field("native_unwinds", {{"fast", 90},
                                          {"slow", 10},
                                          {"checked", 2},
                                          {"differed", 0},
                                          {"truncated", 5}, {"through_varying", 7},
                                          {"frames_recalled", 1500}, {"frames_asked", 300},
                                          {"failed",
                                           {{"plumbing_unknown", 1},
                                            {"plumbing_varies", 2},
                                            {"unknown", 3},
                                            {"varies", 4},
                                            {"off_stack", 0}}}});
    r.set_header_field("driver_calls", {{"cuLaunchKernel", {400, 900000, 200, 400000}},
                                        {"cuEventQuery", {600, 300000, 500, 250000}},
                                        {"cuMemcpyAsync", {20, 50000}}});
    r.set_header_field("driver_calls_wrapped", {{"cuLaunchKernel", {300, 450000, 150, 300000}}});
    const StreamId latin1 = r.stream("caf\xe9 stream");
    const uint64_t buf = r.alloc(64, "buf");
    r.kernel(latin1, "writer\xff", {writes(buf, 64)});
    r.kernel(r.stream("other"), "reader", {reads(buf, 64)});
    run.write_dir((root / "latin1").string());
  }

  {
    TraceBuilder run(1);
    RankTraceBuilder& r = run.rank(0);
    r.set_header_field("host", "gpu\x1b]0;owned\x07host");
    r.set_header_field("command", nlohmann::json::array({"python", "train.py\nstreamhaz: forged line"}));
    r.set_header_field("devices", nlohmann::json::array({{{"index", 0}, {"name", "H200\x1b[2J"}}}));
    r.set_header_field("tracer_profile",
                       {{"steps", "many"},
                        {"phases", nlohmann::json::array({1, {{"name", 5}, {"calls", "x"}}, {{"name", "k\x1b[1m"}, {"calls", 2}, {"ns", 9}}})},
                        {"threads", nlohmann::json::array({{{"name", "t\nstreamhaz: forged line"},
                                                            {"phases", {{"a", {1}}, {"b\x1b[2J", {1, 2}}}}}})}});
    const StreamId s = r.stream("csi\xc2\x9b" "31m \xe2\x80\xae" "maerts");
    const uint64_t buf = r.alloc(64, "buf\nstreamhaz: forged finding");
    r.kernel(s, "k\x1b[1m", {writes(buf, 64)});
    r.kernel(r.stream("other\\x1b"), "reader", {reads(buf, 64)});
    run.write_dir((root / "hostile").string());
  }
  fs::create_directories(root / "evil-name");
  write_file(root / "evil-name" / "rank0\nstreamhaz: forged line.shz", corrupt);

  {
    TraceBuilder run(1);
    RankTraceBuilder& r = run.rank(0);
    const StreamId s = r.stream("comm");
    const uint64_t buf = r.alloc(4096, "buf");
    for (int i = 0; i < 16; ++i)
      r.nccl_in_group(s, NcclKind::AllReduce, buf, buf, 1024, TraceBuilder::comm(0), 5, UINT32_MAX);
    run.write_dir((root / "nranks-bomb").string());
  }
  {
    TraceBuilder run(1);
    RankTraceBuilder& r = run.rank(0);
    const uint64_t buf = r.alloc(64, "buf");
    r.kernel(r.stream("a"), "long" + std::string(100 * 1024, 'g'), {writes(buf, 64)});
    r.kernel(r.stream("b"), "reader", {reads(buf, 64)});
    run.write_dir((root / "long-name").string());
  }
  {
    fs::create_directories(root / "name-bomb");
    RankTraceBuilder r(0, 1, (root / "name-bomb" / "rank0.shz").string());  // streamed: not held here
    const std::string name(kMaxStringBytes, 'n');
    for (StringId id = 1; id <= 4000; ++id) r.add(StringDef{id, name});
    r.close();
  }
  {
    TraceBuilder run(2);
    for (int rank = 0; rank < run.world_size(); ++rank)
      zero2_step(run.rank(rank), true, "compute\x1b]0;owned\x07", "reduction\nFAKE: forged line\x1b[2J");
    run.write_dir((root / "hostile-sync").string());
  }
  fs::create_directories(root / "evil-truncated");
  fs::copy_file(root / "clean" / "rank0.shz", root / "evil-truncated" / "rank0.shz");
  write_file(root / "evil-truncated" / "rank1\n=====\nFAKE: forged.shz", clean1.substr(0, clean1.size() - 7));
  {
    TraceBuilder run(1);
    zero2_step(run.rank(0), true);
    run.write_dir((root / "truncated-untimed").string());
    const fs::path file = root / "truncated-untimed" / "rank0.shz";
    const std::string whole = read_file(file);
    write_file(file, whole.substr(0, whole.size() - 7));
  }
  {
    TraceBuilder run(1);
    run.rank(0).set_header_field("version", "4");
    zero2_step(run.rank(0), true);
    run.write_dir((root / "bad-version").string());
  }

  write_file(root / "existing.txt", "keep me\n");
  fs::create_directories(root / "earlier-run");
  write_file(root / "earlier-run" / "rank0.shz", "keep me\n");
  std::cout << "scenario traces in " << root.string() << " (corrupt byte at " << first_payload_byte << ")\n";
  return 0;
}
