#!/usr/bin/env bash
# What one traced call's recorder path touches (instructions, code and data lines and pages),
# counted by valgrind's lackey: bench/tracer_call_footprint.cpp says why and how.
#   bash bench/call_footprint.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: call_footprint.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind > /dev/null || { echo "call_footprint: valgrind is not installed" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
marker=$(valgrind --tool=lackey --trace-mem=yes --log-file="$log" "$build/bench/tracer_call_footprint" | awk '/^marker/ {print $2}')
python3 "$here/call_footprint.py" "${marker#0x}" "$log"
