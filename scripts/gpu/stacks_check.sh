#!/usr/bin/env bash
# Call stacks on the GPU host: are the findings' source lines right, and what do stacks cost?
#   bash scripts/gpu/stacks_check.sh BUILD_DIR OUT_DIR [ROUNDS]
# 1. tests/gpu/torch_ipg_bucket.py unannotated (--no-names), IPG race with a slow reduction
#    stream, under torchrun (2 ranks where 2 GPUs are there, else 1): `check`'s text and JSON
#    must name the lines marked `# stack:` in the script (tests/gpu/check_stacks.py).
# 2. streamhaz-reducer --sync race (C++, native stacks): the race's stacks must be symbolised
#    to the reducer's own source files at check time.
# 3. Cost, interleaved ROUNDS times (default 3): PyTorch host time per kernel launch from a
#    30-frame-deep Python stack (bench/torch_launch_overhead.py, 10th percentile of its batches),
#    and frames_ns, the same process's extra time per launch at 30 frames over 2 frames, reducer and torch_ipg_bucket
#    step times; untraced, traced with --stacks off, auto, all; and trace bytes per operation.
# Writes OUT_DIR/summary.txt and keeps the traces and check outputs there.
set -u -o pipefail
build=$(cd "${1:?usage: stacks_check.sh BUILD_DIR OUT_DIR [ROUNDS]}" && pwd)
out=${2:?usage: stacks_check.sh BUILD_DIR OUT_DIR [ROUNDS]}
rounds=${3:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
shz=$build/bin/streamhaz
reducer=$build/bin/streamhaz-reducer
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
gpus=$(nvidia-smi -L | wc -l)
ranks=$(( gpus >= 2 ? 2 : 1 ))
failed=0
say() { echo "$*" | tee -a "$summary"; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $gpus GPU(s), $ranks rank(s)"

# 1. PyTorch, unannotated.
name=torch-race-${ranks}gpu-delay-stacks
log=$("$shz" run --force --out "$out/$name" -- torchrun --standalone --nproc_per_node "$ranks" \
      "$here/tests/gpu/torch_ipg_bucket.py" --no-names --sync race --comm-delay-ms 2 --steps 3 2>&1)
say "$name: $(grep -o 'corrupted_elements_all_ranks=[0-9]*' <<< "$log")"
"$shz" check "$out/$name" --fail-on none > "$out/$name.txt" 2>&1
"$shz" check "$out/$name" --fail-on none --format json --output "$out/$name.json" > /dev/null 2>&1
"$shz" check "$out/$name" --fail-on none --format sarif --output "$out/$name.sarif" > /dev/null 2>&1
if python3 "$here/tests/gpu/check_stacks.py" torch "$here/tests/gpu/torch_ipg_bucket.py" "$out/$name.txt" \
     "$out/$name.json" "$out/$name.sarif" | tee -a "$summary"; then :; else failed=1; fi

# 2. The reducer, native stacks symbolised offline.
name=reducer-race-1gpu-delay-stacks
"$shz" run --force --out "$out/$name" -- "$reducer" --nproc 1 --sync race --comm-delay-us 2000 --steps 3 \
  --warmup 1 > "$out/$name.log" 2>&1
"$shz" check "$out/$name" --fail-on none > "$out/$name.txt" 2>&1
"$shz" check "$out/$name" --fail-on none --format json --output "$out/$name.json" > /dev/null 2>&1
if python3 "$here/tests/gpu/check_stacks.py" reducer "$here/reducer/src" "$out/$name.txt" "$out/$name.json" \
     | tee -a "$summary"; then :; else failed=1; fi

# 3. Cost.
field() { grep -o "$1=-\?[0-9.]*" | head -1 | cut -d= -f2; }
launch=(python3 "$here/bench/torch_launch_overhead.py" 1000 30)
red=("$reducer" --nproc 1 --sync serialize --steps 10 --warmup 3)
ipg=(torchrun --standalone --nproc_per_node "$ranks" "$here/tests/gpu/torch_ipg_bucket.py" --sync event --steps 8)
traced() {  # stacks-mode command... -> output
  local mode=$1; shift
  "$shz" run --force --stacks "$mode" --out "$out/cost-$mode" -- "$@" 2>&1
}
for ((r = 1; r <= rounds; ++r)); do
  for mode in untraced off auto all; do
    if [[ $mode == untraced ]]; then
      lo=$("${launch[@]}" 2>&1); s=$("${red[@]}" 2>&1 | field step_ms)
      t=$("${ipg[@]}" 2>&1 | field step_ms)
    else
      lo=$(traced $mode "${launch[@]}"); s=$(traced $mode "${red[@]}" | field step_ms)
      t=$(traced $mode "${ipg[@]}" | field step_ms)
    fi
    l=$(field launch_ns_p10 <<< "$lo"); f=$(field deep_minus_shallow <<< "$lo")
    echo "$mode launch_ns=$l frames_ns=$f reducer_step_ms=$s torch_step_ms=$t" >> "$out/cost.txt"
  done
done
python3 - "$out/cost.txt" <<'PY' | tee -a "$summary"
import collections, re, statistics, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    mode, *fields = line.split()
    for f in fields:
        k, v = f.split("=")
        if v:
            rows[mode][k].append(float(v))
base = {k: statistics.median(v) for k, v in rows["untraced"].items() if v}
for mode in ("untraced", "off", "auto", "all"):
    parts = []
    for k in ("launch_ns", "frames_ns", "reducer_step_ms", "torch_step_ms"):
        v = rows[mode][k]
        if not v:
            parts.append(f"{k} -")
            continue
        m = statistics.median(v)
        rel = ""
        if k in base and mode != "untraced":
            rel = f" (+{m - base[k]:.0f})" if k == "frames_ns" else f" ({m / base[k]:.3f}x, +{m - base[k]:.0f})"
        parts.append(f"{k} {m:.3f}{rel}" if "ms" in k else f"{k} {m:.0f}{rel}")
    print(f"cost {mode}: " + ", ".join(parts) + f" [{len(rows[mode]['launch_ns'])} rounds]")
PY
# Trace size per operation: the last cost run of each mode (torch_ipg_bucket) and the race traces.
for t in "$out"/cost-off "$out"/cost-auto "$out"/cost-all "$out"/torch-race-*-stacks "$out"/reducer-race-*-stacks; do
  bytes=$(cat "$t"/*.shz | wc -c)
  ops=$("$shz" inspect "$t" 2>/dev/null | grep -o 'operations: [0-9]*' | awk '{s+=$2} END {print s}')
  say "size $(basename "$t"): $bytes bytes, $ops operations, $(( ops > 0 ? bytes / ops : 0 )) bytes/operation"
done
[[ $failed -eq 0 ]] && say "stacks_check: PASS" || say "stacks_check: FAILED"
exit $failed
