#!/usr/bin/env bash
# Captures the bundled traces on a GPU machine (2 GPUs), one folder per configuration, and
# writes the manifest entries for them:
#   bash scripts/gpu/capture_traces.sh BUILD_DIR OUT_DIR
# OUT_DIR gets <name>/rank<N>.shz for every configuration, manifest.jsonl (one line each:
# name, command, machine, expected verdict, reducer self-check) and check.txt (what
# `streamhaz check` said there).
set -u -o pipefail
# Paths stay as given (relative to the repository root when run from there), so that the
# commands recorded in the trace headers name no folder of the capturing machine.
build=${1:?usage: capture_traces.sh BUILD_DIR OUT_DIR}
build=${build%/}
out=${2:?usage: capture_traces.sh BUILD_DIR OUT_DIR}
here=$(realpath --relative-to=. "$(dirname "$0")/../..")
[[ -x $build/bin/streamhaz && -x $build/bin/streamhaz-reducer ]] || { echo "no streamhaz build in $build" >&2; exit 2; }
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
shz=$build/bin/streamhaz
reducer=$build/bin/streamhaz-reducer
mkdir -p "$out"
machine="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x$(nvidia-smi -L | wc -l), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
delay=${DELAY_US:-2000}
steps=${STEPS:-3}

# name | gpus | reducer arguments | expected verdict
configs=()
for g in 1 2; do
  for d in 0 $delay; do
    sfx="${g}gpu$([[ $d -gt 0 ]] && echo -delay)"
    extra="--steps $steps --warmup 1 --comm-delay-us $d"
    configs+=("race-$sfx|$g|--sync race $extra|race")
    configs+=("serialize-$sfx|$g|--sync serialize $extra|clean")
    configs+=("device-$sfx|$g|--sync device $extra|clean")
    configs+=("host-$sfx|$g|--sync host $extra|clean")
    configs+=("event-$sfx|$g|--sync event $extra|clean")
    configs+=("event3-$sfx|$g|--sync event --ipg-buffers 3 $extra|clean")
    configs+=("index-reset-$sfx|$g|--sync serialize --bug index-reset $extra|race")
  done
done

: > "$out/manifest.jsonl"
: > "$out/check.txt"
for c in "${configs[@]}"; do
  IFS='|' read -r name gpus args expect <<< "$c"
  cmd="streamhaz run --out traces/$name -- streamhaz-reducer --nproc $gpus $args"
  log=$("$shz" run --gpu-times all --out "$out/$name" -- "$reducer" --nproc "$gpus" $args 2>&1)
  status=$?
  corrupted=$(grep -o 'corrupted_elements_all_ranks=[0-9]*' <<< "$log" | head -1 | cut -d= -f2)
  "$shz" check "$out/$name" > "$out/$name.check" 2>&1
  verdict=$?
  echo "$name: reducer exit $status, corrupted ${corrupted:-?}, check exit $verdict (expect $expect)" | tee -a "$out/check.txt"
  python3 - "$name" "$cmd" "$machine" "$expect" "${corrupted:-null}" >> "$out/manifest.jsonl" <<'PY'
import json, sys
name, cmd, machine, expect, corrupted = sys.argv[1:]
print(json.dumps({"name": name, "command": cmd, "machine": machine, "expect": expect,
                  "reducer_corrupted_elements": None if corrupted == "null" else int(corrupted)}))
PY
done

# PyTorch with the same IPG bucket pattern, 2 ranks under torchrun.
for sync in race event; do
  for d in 0 2; do
    name="torch-$sync-2gpu$([[ $d -gt 0 ]] && echo -delay)"
    expect=$([[ $sync == race ]] && echo race || echo clean)
    cmd="streamhaz run --out traces/$name -- torchrun --standalone --nproc_per_node 2 tests/gpu/torch_ipg_bucket.py --sync $sync --comm-delay-ms $d"
    log=$("$shz" run --gpu-times all --out "$out/$name" -- torchrun --standalone --nproc_per_node 2 \
          "$here/tests/gpu/torch_ipg_bucket.py" --sync "$sync" --comm-delay-ms "$d" 2>&1)
    status=$?
    corrupted=$(grep -o 'corrupted_elements_all_ranks=[0-9]*' <<< "$log" | head -1 | cut -d= -f2)
    "$shz" check "$out/$name" > "$out/$name.check" 2>&1
    verdict=$?
    echo "$name: exit $status, corrupted ${corrupted:-?}, check exit $verdict (expect $expect)" | tee -a "$out/check.txt"
    [[ $status -eq 0 ]] || tail -5 <<< "$log"
    python3 - "$name" "$cmd" "$machine" "$expect" "${corrupted:-null}" >> "$out/manifest.jsonl" <<'PY'
import json, sys
name, cmd, machine, expect, corrupted = sys.argv[1:]
print(json.dumps({"name": name, "command": cmd, "machine": machine, "expect": expect,
                  "workload_corrupted_elements": None if corrupted == "null" else int(corrupted)}))
PY
  done
done
du -sh "$out"
