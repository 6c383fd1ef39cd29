#include "shard/irregular_input.h"

#include <fmt/format.h>

namespace streamhaz::analysis {

std::string describe_irregularity(const Irregularity& what, const std::string& trace_file, int rank) {
  const trace::Nccl& n = what.call;
  const char* problem = "";
  switch (what.what) {
    case Irregularity::What::PostedAfterCompleted:
      problem = "was posted again after it completed (every rank of the communicator had posted it)";
      break;
    case Irregularity::What::CommRankTwice: problem = "was posted twice by the same communicator rank"; break;
    case Irregularity::What::RankOutsideCommunicator: problem = "names a communicator rank outside the communicator"; break;
    case Irregularity::What::MorePostsThanRanks: problem = "got more posts than the communicator has ranks"; break;
  }
  return fmt::format(
      "irregular NCCL input in {} (rank {}): {} at operation seq {}, sequence number {} of communicator {:#x} "
      "(communicator rank {} of {}), {}. The processes of a sharded check could disagree about such a call, "
      "so the check stops here; `streamhaz check` checks these traces in one order",
      trace_file, rank, trace::to_string(n.kind), n.op.seq, n.comm_seq, n.comm, n.rank, n.nranks, problem);
}

}  // namespace streamhaz::analysis
