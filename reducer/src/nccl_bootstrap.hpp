// Creating the NCCL communicator: rank 0 publishes the unique id through a file.
#pragma once

#include <nccl.h>

#include <string>

namespace reducer {

// The id file to use: --nccl-id-file, else STREAMHAZ_NCCL_ID_FILE (set by our launcher), else
// a name in $TMPDIR keyed by the parent's pid, which all ranks of one torchrun agent share.
std::string nccl_id_file_path(const std::string& from_options);

// A fresh, unused path for the ranks that launch_ranks starts.
std::string fresh_nccl_id_file_path();

// Rank 0 creates the id and writes it atomically (temporary file + rename); the others poll
// for it. Rank 0 removes the file once the communicator exists on every rank.
ncclComm_t init_communicator(int rank, int world_size, const std::string& id_file);

}  // namespace reducer
