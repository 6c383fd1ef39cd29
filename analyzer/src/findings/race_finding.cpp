#include "findings/race_finding.h"

#include <fmt/format.h>

#include "findings/missing_order.h"

namespace streamhaz::analysis {
namespace {

const char* role_word(trace::AccessMode m) { return m == trace::AccessMode::Read ? "read" : "write"; }

}  // namespace

Finding race_finding(RaceFacts r) {
  Finding f;
  f.kind = r.possible ? FindingKind::PossibleRace : FindingKind::Race;
  f.first = std::move(r.first);
  f.second = std::move(r.second);
  f.buffer = std::move(r.buffer);
  f.title = fmt::format("{}{}-after-{} race on {}", r.possible ? "possible " : "", role_word(f.second.role),
                        role_word(f.first.role), f.buffer.name);
  f.missing_order = missing_order_text(f.first, f.second, r.second_on_host);
  f.tier = r.tier;
  f.exact = r.exact;
  if (r.possible)
    f.detail = fmt::format("a kernel of this pair received a pointer to byte {} of the buffer as a launch argument; "
                           "which bytes it reads or writes is unknown: trace with --footprints exact, or give "
                           "check a kernels.json summary (streamhaz kernels scan), to confirm or clear it",
                           f.buffer.offset);
  else if (f.tier == trace::FootprintTier::Pointer)
    f.detail = fmt::format("a kernel of this pair received a pointer to byte {} of the buffer as a launch argument{}; "
                           "a kernel touches the tensors it is given, so the pair conflicts with no order between "
                           "them (--footprints exact shows every byte the kernel touched)",
                           f.buffer.offset,
                           r.directed_write ? ", and by PyTorch's TensorIterator convention (outputs first) the "
                                              "kernel writes it"
                                            : "");
  if (r.in_graph)
    f.detail += std::string(f.detail.empty() ? "" : "; ") +
                "an operation of this pair ran as part of a CUDA graph launch (seq is its capture-time call)";
  auto part = [](const OpRef& o) {
    return fmt::format("{}:{}|{}|{}|{}", role_word(o.role), o.kind, o.name, o.stream_name, o.nvtx);
  };
  f.key = fmt::format("{}|{}||{}||{}", r.possible ? "possible-race" : "race", part(f.first), part(f.second),
                      r.buffer_key);
  return f;
}

}  // namespace streamhaz::analysis
