#!/usr/bin/env bash
# streamhaz and PyTorch's profiler in one process, in both orders (GPU machine):
#   bash scripts/gpu/profiler_coexist.sh BUILD_DIR [OUT_DIR]
# For each order, runs tests/gpu/torch_profiler_coexist.py untraced and under `streamhaz run`,
# and prints: the job's exit status and result line (which must match the untraced run's, the
# profiler's CUDA event count included), the tracer's warnings, what the trace holds (`inspect`),
# and what `check` says of it (exit 1: the run after the profiler's start went unobserved).
# Exits 1 when any of that does not hold.
set -u -o pipefail
build=$(cd "${1:?usage: profiler_coexist.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp}/profiler_coexist}
here=$(cd "$(dirname "$0")/../.." && pwd)
shz=$build/bin/streamhaz
mkdir -p "$out"
failed=0
for at in middle start; do
  job=(python3 "$here/tests/gpu/torch_profiler_coexist.py" --profile-at "$at")
  echo "== profiler opened at the $at"
  plain=$("${job[@]}" 2>&1); echo "untraced: exit $?: $(grep torch_profiler_coexist <<<"$plain")"
  traced=$("$shz" run --force --out "$out/$at" -- "${job[@]}" 2>&1); rc=$?
  echo "traced:   exit $rc: $(grep torch_profiler_coexist <<<"$traced")"
  grep -i "streamhaz:" <<<"$traced" | sed 's/^/  tracer says: /'
  "$shz" inspect "$out/$at" 2>&1 | grep -E "operations:|records by kind|TRUNCATED|warning" | sed 's/^/  inspect: /'
  checked=$("$shz" check "$out/$at" 2>&1); verdict=$?
  echo "  check: exit $verdict"
  tail -4 <<<"$checked" | sed 's/^/  check: /'
  want=$(grep torch_profiler_coexist <<<"$plain"); got=$(grep torch_profiler_coexist <<<"$traced")
  [[ -n $want && $want == "$got" ]] || { echo "FAILED: the traced job's result or profiler differs"; failed=1; }
  [[ $rc -eq 0 ]] || { echo "FAILED: the traced job exited $rc"; failed=1; }
  [[ $verdict -eq 1 ]] && grep -q "stopped observing the run" <<<"$checked" ||
    { echo "FAILED: check did not report the unobserved part of the run"; failed=1; }
done
exit $failed
