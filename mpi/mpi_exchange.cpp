#include "mpi_exchange.h"

#include <mpi.h>

#include <climits>
#include <stdexcept>

namespace streamhaz::mpi {

MpiExchange::MpiExchange() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

std::vector<std::string> MpiExchange::all_gather(const std::string& mine) {
  if (mine.size() > INT_MAX) throw std::runtime_error("streamhaz-check-mpi: a message over 2 GiB");
  const int n = static_cast<int>(mine.size());
  std::vector<int> sizes(size_), offsets(size_);
  MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  long long total = 0;
  for (int p = 0; p < size_; ++p) {
    offsets[p] = static_cast<int>(total);
    total += sizes[p];
    if (total > INT_MAX) throw std::runtime_error("streamhaz-check-mpi: a round over 2 GiB");
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int p = 0; p < size_; ++p) out.push_back(all.substr(offsets[p], sizes[p]));
  return out;
}

}  // namespace streamhaz::mpi
