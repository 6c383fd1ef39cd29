// ShardExchange over MPI_COMM_WORLD: an all-gather of byte strings (sizes, then the bytes).
#pragma once

#include "streamhaz/analysis/sharded.h"

namespace streamhaz::mpi {

class MpiExchange : public analysis::ShardExchange {
 public:
  MpiExchange();
  int processes() const override { return size_; }
  int me() const override { return rank_; }
  std::vector<std::string> all_gather(const std::string& mine) override;

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace streamhaz::mpi
