// The race check sharded over processes (streamhaz-check-mpi): process p checks the ranks
// whose place in the file list is p modulo the process count, and the processes exchange only
// collective posts (a rank's clock at a collective's start, the ids of the frontiers it knows)
// in rounds, and each one's findings at the end. Every process keeps a copy of the collective
// matcher that applies every post in one order, so cross-rank order is the single process's.
// The transport belongs to the caller (MPI in mpi/; threads in the tests).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "streamhaz/analysis/analyze.h"

namespace streamhaz::analysis {

class ShardExchange {
 public:
  virtual ~ShardExchange() = default;
  virtual int processes() const = 0;
  virtual int me() const = 0;
  // Every process's bytes in process order; every process calls it the same number of times.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

// Irregular collective input (a call posted again after it completed, twice by one communicator
// rank, by more ranks than it has): the processes' copies of the matcher could drift apart on
// it, so every process throws this, in the same round and with the same message (what, where).
class IrregularCollectives : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Process 0 gets what analyze(trace_files, options) gives (`jobs` and `dense_clocks` aside);
// the other processes get an empty result. Bad input throws trace::TraceError on the process
// that reads it; the caller must end the others (MPI_Abort). Irregular collective input throws
// IrregularCollectives on every process (no process is left waiting).
AnalysisResult analyze_shard(const std::vector<std::string>& trace_files, const AnalysisOptions& options,
                             ShardExchange& exchange);

}  // namespace streamhaz::analysis
