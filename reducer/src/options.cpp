#include "options.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace reducer {
namespace {

constexpr const char* kUsage = R"(usage: streamhaz-reducer [options]

A ZeRO-2 overlapped backward step (cuBLAS + NCCL) with DeepSpeed's synchronisation variants
and an exact self-check. One process per GPU: --nproc N starts them, or run it under a
torchrun-style launcher (RANK, WORLD_SIZE, LOCAL_RANK).

  --nproc N              start N ranks (1, 2, 4 or 8), one per GPU
  --sync MODE            race | serialize | device | host | event     (default serialize)
  --ipg-buffers N        number of IPG buffers                         (default 2)
  --bug NAME             none | index-reset                            (default none)
  --bucket-copy HOW      memcpy | kernel: how gradients enter the bucket (default memcpy)
  --comm-delay-us D      spin D microseconds on the reduction stream before each collective
  --steps S              steps to run                                  (default 10)
  --warmup W             steps left out of the timing median           (default 3)
  --layers L             layers in the backward                        (default 12)
  --layer-elems E        fp32 gradient elements per layer              (default 8388608)
  --bucket-elems B       IPG bucket capacity in elements, >= E         (default 25165824)
  --gemm-dim G           m=n=k of each layer's bf16 GEMM               (default 4096)
  --reduce-scatter       reduce each bucket to the partition owners instead of all-reduce
  --nccl-id-file PATH    file through which rank 0 shares the NCCL unique id
  --expect-clean         exit 1 if any element is corrupted
  --help                 this text
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "streamhaz-reducer: %s (try --help)\n", message.c_str());
  std::exit(2);
}

std::int64_t parse_int(std::string_view flag, std::string_view text, std::int64_t min,
                       std::int64_t max) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size())
    usage_error(std::string(flag) + " expects an integer, got '" + std::string(text) + "'");
  if (value < min || value > max)
    usage_error(std::string(flag) + " must be between " + std::to_string(min) + " and " +
                std::to_string(max) + ", got " + std::to_string(value));
  return value;
}

SyncMode parse_sync(std::string_view text) {
  if (text == "race") return SyncMode::race;
  if (text == "serialize") return SyncMode::serialize;
  if (text == "device") return SyncMode::device;
  if (text == "host") return SyncMode::host;
  if (text == "event") return SyncMode::event;
  usage_error("--sync expects race, serialize, device, host or event, got '" +
              std::string(text) + "'");
}

Bug parse_bug(std::string_view text) {
  if (text == "none") return Bug::none;
  if (text == "index-reset") return Bug::index_reset;
  usage_error("--bug expects none or index-reset, got '" + std::string(text) + "'");
}

}  // namespace

const char* to_string(SyncMode mode) {
  switch (mode) {
    case SyncMode::race: return "race";
    case SyncMode::serialize: return "serialize";
    case SyncMode::device: return "device";
    case SyncMode::host: return "host";
    case SyncMode::event: return "event";
  }
  return "?";
}

const char* to_string(Bug bug) { return bug == Bug::index_reset ? "index-reset" : "none"; }
const char* to_string(BucketCopy copy) { return copy == BucketCopy::kernel ? "kernel" : "memcpy"; }

Options parse_options(const std::vector<std::string>& args) {
  Options options;
  constexpr std::int64_t kMaxElems = std::int64_t{1} << 34;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) usage_error(flag + " needs a value");
      return args[++i];
    };
    auto no_value = [&] {
      if (inline_value) usage_error(flag + " takes no value");
    };

    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (flag == "--nproc") {
      options.nproc = static_cast<int>(parse_int(flag, value(), 1, 8));
    } else if (flag == "--sync") {
      options.sync = parse_sync(value());
    } else if (flag == "--bug") {
      options.bug = parse_bug(value());
    } else if (flag == "--bucket-copy") {
      const std::string how = value();
      if (how == "memcpy") options.bucket_copy = BucketCopy::memcpy;
      else if (how == "kernel") options.bucket_copy = BucketCopy::kernel;
      else usage_error("--bucket-copy must be memcpy or kernel, not '" + how + "'");
    } else if (flag == "--ipg-buffers") {
      options.ipg_buffers = static_cast<int>(parse_int(flag, value(), 1, 16));
    } else if (flag == "--comm-delay-us") {
      options.comm_delay_us = parse_int(flag, value(), 0, 10'000'000);
    } else if (flag == "--steps") {
      options.steps = static_cast<int>(parse_int(flag, value(), 1, 100'000));
    } else if (flag == "--warmup") {
      options.warmup = static_cast<int>(parse_int(flag, value(), 0, 100'000));
    } else if (flag == "--layers") {
      options.layers = static_cast<int>(parse_int(flag, value(), 1, 4096));
    } else if (flag == "--layer-elems") {
      options.layer_elems = parse_int(flag, value(), 1, kMaxElems);
    } else if (flag == "--bucket-elems") {
      options.bucket_elems = parse_int(flag, value(), 1, kMaxElems);
    } else if (flag == "--gemm-dim") {
      options.gemm_dim = static_cast<int>(parse_int(flag, value(), 0, 32768));
    } else if (flag == "--reduce-scatter") {
      no_value();
      options.reduce_scatter = true;
    } else if (flag == "--nccl-id-file") {
      options.nccl_id_file = value();
      if (options.nccl_id_file.empty()) usage_error("--nccl-id-file needs a non-empty path");
    } else if (flag == "--expect-clean") {
      no_value();
      options.expect_clean = true;
    } else {
      usage_error("unknown argument '" + args[i] + "'");
    }
  }
  if (options.bucket_elems < options.layer_elems)
    usage_error("--bucket-elems (" + std::to_string(options.bucket_elems) +
                ") must hold at least one layer (--layer-elems " +
                std::to_string(options.layer_elems) + ")");
  return options;
}

}  // namespace reducer
