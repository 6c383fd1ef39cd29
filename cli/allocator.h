// The allocator the streamhaz command runs on (cmake/StreamhazAllocator.cmake), as `--version`
// reports it: asked at run time, so that a build whose mimalloc does not replace malloc says so.
#pragma once

#include <string>

namespace streamhaz::cli {

// "mimalloc" when a block from the C allocator lies in mimalloc's heap; "system" otherwise.
std::string allocator_in_use();

// Settings of the allocator for a command that runs once and exits; called first in main.
void tune_allocator();

}  // namespace streamhaz::cli
