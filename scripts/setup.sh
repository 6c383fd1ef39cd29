#!/usr/bin/env bash
# Installs the Debian packages streamhaz builds with. Idempotent; run as root on Debian/Ubuntu.
# The CUDA toolkit, CUPTI and NCCL are not installed here: where they are found (nvcc on PATH or
# /usr/local/cuda) the tracer and reducer are built too, otherwise only the analyzer and CLI.
set -euo pipefail

packages=(cmake ninja-build g++ clang libfmt-dev nlohmann-json3-dev libcli11-dev catch2 libclang-dev zlib1g-dev python3 python3-jsonschema)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build packages present"
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
echo "setup: done"
