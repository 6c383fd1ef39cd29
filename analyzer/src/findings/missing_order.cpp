#include "findings/missing_order.h"

#include <fmt/format.h>

#include "streamhaz/analysis/kernel_name.h"

namespace streamhaz::analysis {

std::string op_phrase(const OpRef& op) {
  if (op.kind == "kernel") return fmt::format("kernel {}", readable_kernel_name(op.name));
  return op.kind;
}

std::string missing_order_text(const OpRef& first, const OpRef& second, bool second_on_host) {
  if (second_on_host)
    return fmt::format(
        "the host must wait for {0} after {1} (seq {2}) before {3} (seq {4}): cudaStreamSynchronize({0}), or "
        "cudaEventSynchronize on an event recorded on {0} after {1}",
        first.stream_name, op_phrase(first), first.seq, second.name, second.seq);
  return fmt::format(
      "{0} must wait for an event recorded on {1} after {2} (seq {3}) before {4} (seq {5}): "
      "cudaEventRecord(ev, {1}) after {2}, cudaStreamWaitEvent({0}, ev) before {4}",
      second.stream_name, first.stream_name, op_phrase(first), first.seq, op_phrase(second), second.seq);
}

}  // namespace streamhaz::analysis
