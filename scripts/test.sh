#!/usr/bin/env bash
# Sets up (Debian packages), builds everything this machine can build, and runs every test.
# The tracer and reducer are built where the CUDA toolkit is found; their GPU tests run on a
# GPU machine through scripts/gpu/*.sh, not here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
build=${STREAMHAZ_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
