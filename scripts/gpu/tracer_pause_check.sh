#!/usr/bin/env bash
# streamhaz_tracer_pause, which the benchmark's in-one-process measurement uses (GPU machine):
#   bash scripts/gpu/tracer_pause_check.sh BUILD_DIR [OUT_DIR]
# Runs the GPT job (DDP, 12 steps) traced, then traced with --tracer-ab (every other step after
# the 2 warm-up steps paused), then so with CUPTI's callbacks left on while paused
# (TRACER_AB_LEVELS=0,2: the same operations, within 2 %, must be traced), and prints: the runs'
# exit status and result line, the traced operations of each (the paused runs must hold fewer:
# 7 of 12 steps), and what `check` says of
# the paused run (exit 1: it reports the run as observed only in part). Exits 1 when any of that
# does not hold.
set -u -o pipefail
build=$(cd "${1:?usage: tracer_pause_check.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp}/tracer_pause_check}
here=$(cd "$(dirname "$0")/../.." && pwd)
shz=$build/bin/streamhaz
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p "$out"
job=(torchrun --standalone --nproc_per_node 1 "$here/tests/gpu/torch_gpt_train.py" --parallel ddp --steps 12 --warmup 2)
failed=0
operations() { "$shz" inspect "$1" 2>&1 | sed -n 's/.*operations: \([0-9]*\).*/\1/p' | head -1; }
whole=$("$shz" run --force --out "$out/whole" -- "${job[@]}" 2>&1); rc_whole=$?
paused=$("$shz" run --force --out "$out/paused" -- "${job[@]}" --tracer-ab 2>&1); rc_paused=$?
# Level 2: CUPTI's callbacks stay on while paused, the tracer ignores them.
idle=$(TRACER_AB_LEVELS=0,2 "$shz" run --force --out "$out/idle" -- "${job[@]}" --tracer-ab 2>&1); rc_idle=$?
echo "traced:         exit $rc_whole: $(grep 'step_ms=' <<<"$whole")"
echo "traced, paused: exit $rc_paused: $(grep 'step_ms=' <<<"$paused")"
echo "  $(grep 'tracer_ab' <<<"$paused")"
echo "traced, paused with callbacks on: exit $rc_idle: $(grep 'tracer_ab' <<<"$idle")"
ops_whole=$(operations "$out/whole"); ops_paused=$(operations "$out/paused"); ops_idle=$(operations "$out/idle")
echo "  operations traced: ${ops_whole:-?} whole, ${ops_paused:-?} with every other step paused, ${ops_idle:-?} paused with callbacks on"
checked=$("$shz" check "$out/paused" 2>&1); verdict=$?
echo "  check of the paused run: exit $verdict"
grep -m1 "observed only in part" <<<"$checked" | sed 's/^/  check: /'
[[ $rc_whole -eq 0 && $rc_paused -eq 0 && $rc_idle -eq 0 ]] || { echo "FAILED: a traced job failed"; failed=1; }
grep -q "tracer_ab levels=0,2 .*pairs=5" <<<"$idle" || { echo "FAILED: no tracer_ab line of levels 0,2 with 5 pairs"; failed=1; }
[[ -n $ops_idle && -n $ops_paused ]] && ((ops_idle * 50 >= ops_paused * 49 && ops_idle * 50 <= ops_paused * 51)) ||
  { echo "FAILED: paused with callbacks on, the trace holds other operations than paused with them off"; failed=1; }
grep -q "tracer_ab .*pairs=5" <<<"$paused" || { echo "FAILED: no tracer_ab line with 5 pairs"; failed=1; }
[[ -n $ops_whole && -n $ops_paused ]] && ((ops_paused * 10 < ops_whole * 8)) ||
  { echo "FAILED: pausing did not leave operations out of the trace"; failed=1; }
[[ $verdict -eq 1 ]] && grep -q "stopped observing the run" <<<"$checked" ||
  { echo "FAILED: check did not report the paused run as observed in part"; failed=1; }
exit $failed
