#!/usr/bin/env bash
# The tracer's GPU-times modes on the accelerator machine:
#   bash scripts/gpu/timing_modes_check.sh BUILD_DIR [GPUS]
# 1. The reducer traced in each mode: `all` times every operation, `off` none, `steps` and `sampled`
#    some and not all (a short period, so that a short run spans several windows; `steps:4` the
#    start and five steps of 40, under half of the operations); the trace
#    header names the mode; `check` gives the same exit status and finding counts in every mode.
# 2. Reducer step time traced / untraced per mode, alternating, 3 pairs each.
# Exits 1 if a check failed.
set -u -o pipefail
build=$(cd "${1:?usage: timing_modes_check.sh BUILD_DIR [GPUS]}" && pwd)
gpus=${2:-1}
shz=$build/bin/streamhaz
reducer=$build/bin/streamhaz-reducer
dump=$build/bin/trace_to_jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
export NCCL_NVLS_ENABLE=0

echo "=== trace content per mode (reducer, $gpus GPU(s), 40 steps; 400 for sampled)"
for mode in all steps:4 steps:4/10 sampled:30/300 off; do
  dir=$tmp/content-${mode//[:\/]/_}
  # A sampled run must span several 300 ms periods: 40 reducer steps on one GPU take about
  # 130 ms, which can fall between two 30 ms windows.
  steps=40; [[ $mode == sampled* ]] && steps=400
  "$shz" run --gpu-times "$mode" --out "$dir" -- "$reducer" --nproc "$gpus" --steps $steps --warmup 2 >/dev/null || fail "$mode: reducer exit"
  for f in "$dir"/*.shz; do
    "$dump" "$f" > "$tmp/t.jsonl" || { fail "$mode: $f unreadable"; continue; }
    python3 - "$tmp/t.jsonl" "$mode" <<'PY' || fail "$mode: trace content"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
mode = sys.argv[2]
header, recs = rows[0]["header"], rows[1:-1]
timed = {r["op_seq"] for r in recs if r["type"] == "timing"}
ops = [r for r in recs if r["type"] in ("kernel", "memcpy", "memset") or (r["type"] == "nccl" and r["nranks"] > 1)]
n = sum(1 for r in ops if r["seq"] in timed)
print(f"{mode}: header gpu_times={header.get('gpu_times')}; {n} of {len(ops)} operations timed")
ok = header.get("gpu_times") == mode and len(ops) > 0
if mode == "all": ok = ok and n == len(ops)
elif mode == "off": ok = ok and n == 0
else: ok = ok and 0 < n < len(ops)
# steps:4 times the start, the warm-up and four steps of the 40, then nothing: well under half.
if mode == "steps:4": ok = ok and n < len(ops) // 2
sys.exit(0 if ok else 1)
PY
  done
  "$shz" check --format json "$dir" > "$tmp/verdict.json"; status=$?
  verdict=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['summary']; print(f\"exit $status, {s['findings']} findings, {s['races']} races\")" "$tmp/verdict.json") \
    || { fail "$mode: check gave no JSON report"; verdict="none"; }
  echo "$mode: check: $verdict"
  echo "$verdict" >> "$tmp/verdicts.txt"
done
[[ $(sort -u "$tmp/verdicts.txt" | wc -l) -eq 1 ]] || fail "verdicts differ between modes"

echo "=== the default mode, named in the header"
"$shz" run --out "$tmp/default" -- "$reducer" --nproc 1 --steps 4 >/dev/null || fail "default: reducer exit"
default=$("$dump" "$(ls "$tmp/default"/*.shz | head -1)" | head -1 | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['header'].get('gpu_times'))")
echo "default: header gpu_times=$default"
[[ $default == steps:4 ]] || fail "default mode is '$default', not steps:4"

echo "=== reducer step time per mode ($gpus GPU(s), 30 steps), untraced and traced alternating"
step_ms() { grep '^reducer: rank=0' | sed 's/.*step_ms=\([0-9.]*\).*/\1/'; }
for mode in all steps sampled off; do
  for i in 1 2 3; do
    u=$("$reducer" --nproc "$gpus" --steps 30 | step_ms)
    t=$("$shz" run --gpu-times "$mode" --out "$tmp/step-$mode-$i" -- "$reducer" --nproc "$gpus" --steps 30 | step_ms)
    if [[ -z $u || -z $t ]]; then fail "$mode pair $i: no step time (untraced '$u', traced '$t')"; continue; fi
    echo "$mode pair $i: untraced step_ms=$u traced step_ms=$t ratio=$(python3 -c "print(round($t/$u, 4))")"
  done
done

[[ $failures -eq 0 ]] && echo "timing_modes_check: ALL PASSED" || echo "timing_modes_check: $failures FAILED"
exit $((failures > 0))
