#!/usr/bin/env bash
# Captures the bundled traces on a GPU machine (2 GPUs), one folder per configuration, and
# writes the manifest entries for them:
#   [CAPTURE=all|reducer|torch|memo|real|history] bash scripts/gpu/capture_traces.sh BUILD_DIR OUT_DIR
# (memo: only the exact tier's launch-memo traces, which are part of torch and all too; real: only
# the real-training-code traces at default settings, part of all; history: only the unannotated
# PyTorch race recorded with the allocator history, part of torch and all)
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
[[ -x $build/bin/streamhaz ]] || { echo "no streamhaz build in $build" >&2; exit 2; }
[[ ${CAPTURE:-all} != all && ${CAPTURE:-all} != reducer || -x $build/bin/streamhaz-reducer ]] ||
  { echo "no streamhaz-reducer in $build/bin" >&2; exit 2; }
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
[[ ${CAPTURE:-all} == torch || ${CAPTURE:-all} == memo || ${CAPTURE:-all} == real || ${CAPTURE:-all} == history ]] && configs=()
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

# PyTorch (2 ranks under torchrun for the IPG bucket, 1 for the freed block), traced with the
# default call stacks. Race traces record in the manifest the source lines their findings must
# name (`stack_lines`, from the script's `# stack:` markers at capture time): the golden tests
# check them. Paths under the working folder are made relative to it (--path-prefix-map, left out
# of the recorded command), so the frames name no folder of this host.
stack_lines() {  # script what... -> JSON object {what: "script:line"}
  python3 - "$@" <<'PY'
import json, re, sys
script, wanted = sys.argv[1], sys.argv[2:]
marks = {}
for number, line in enumerate(open(script), 1):
    m = re.search(r"# stack: (.+)$", line)
    if m:
        marks[m.group(1).strip()] = f"{script}:{number}"
print(json.dumps({w: marks[w] for w in wanted}))
PY
}
capture_torch() {  # name expect gpus extra-json run-options -- script args...
  local name=$1 expect=$2 gpus=$3 extra=$4 opts=$5
  shift 6
  local cmd="streamhaz run ${opts:+$opts }--out traces/$name -- torchrun --standalone --nproc_per_node $gpus $*"
  local log status corrupted verdict
  log=$(timeout 300 "$shz" run $opts --path-prefix-map "$PWD/=" --out "$out/$name" -- torchrun --standalone --nproc_per_node "$gpus" "$@" 2>&1)
  status=$?
  corrupted=$(grep -o 'corrupted_elements_all_ranks=[0-9]*' <<< "$log" | head -1 | cut -d= -f2)
  "$shz" check "$out/$name" > "$out/$name.check" 2>&1
  verdict=$?
  echo "$name: exit $status, corrupted ${corrupted:-?}, check exit $verdict (expect $expect)" | tee -a "$out/check.txt"
  [[ $status -eq 0 ]] || tail -5 <<< "$log"
  python3 - "$name" "$cmd" "$machine" "$expect" "${corrupted:-null}" "$extra" >> "$out/manifest.jsonl" <<'PY'
import json, sys
name, cmd, machine, expect, corrupted, extra = sys.argv[1:]
entry = {"name": name, "command": cmd, "machine": machine, "expect": expect,
         "workload_corrupted_elements": None if corrupted == "null" else int(corrupted)}
entry.update(json.loads(extra or "{}"))
print(json.dumps(entry))
PY
}
freed=$(realpath --relative-to=. "$here/tests/gpu/torch_freed_block.py")
freed_lines=$(stack_lines "$freed" "side read" "refill")
ipg_gpus=$(( $(nvidia-smi -L | wc -l) >= 2 ? 2 : 1 ))
ipg=$(realpath --relative-to=. "$here/tests/gpu/torch_ipg_bucket.py")
if [[ ${CAPTURE:-all} == all || ${CAPTURE:-all} == torch || ${CAPTURE:-all} == history ]]; then
  # As a user's unmodified script: no buffer or stream names, only the call stacks. Its buckets are
  # carved from a cached segment another line requested; the allocator's history names their own
  # line (`tensor_lines`: the innermost user frame of a finding's tensor stack).
  capture_torch "torch-race-${ipg_gpus}gpu-delay-unannotated" race "$ipg_gpus" \
    "{\"unannotated\": true, \"stack_lines\": $(stack_lines "$ipg" "bucket copy" "all-reduce" "segment request"), \"tensor_lines\": $(stack_lines "$ipg" "bucket allocation")}" \
    "--gpu-times all --allocator-history on" -- "$ipg" --no-names --reused-segment --sync race --comm-delay-ms 2
fi
if [[ ${CAPTURE:-all} == all || ${CAPTURE:-all} == torch ]]; then
  ipg_gpus=$(( $(nvidia-smi -L | wc -l) >= 2 ? 2 : 1 ))
  ipg=$(realpath --relative-to=. "$here/tests/gpu/torch_ipg_bucket.py")
  ipg_lines=$(stack_lines "$ipg" "bucket copy" "all-reduce" "bucket allocation")
  for sync in race event; do
    for d in 0 2; do
      name="torch-$sync-${ipg_gpus}gpu$([[ $d -gt 0 ]] && echo -delay)"
      expect=$([[ $sync == race ]] && echo race || echo clean)
      extra=$([[ $sync == race ]] && echo "{\"stack_lines\": $ipg_lines}" || echo "{}")
      capture_torch "$name" "$expect" "$ipg_gpus" "$extra" "--gpu-times all" -- "$ipg" --sync "$sync" --comm-delay-ms "$d"
    done
  done
  for tier in pointer exact; do
    sfx=$([[ $tier == exact ]] && echo -exact)
    expect=$([[ $tier == exact ]] && echo race || echo possible)
    extra="{\"stack_lines\": $freed_lines$([[ $tier == exact ]] && echo ', "kernel_race": true')}"
    capture_torch "torch-freed-block-none-1gpu$sfx" "$expect" 1 "$extra" "--footprints $tier --gpu-times off" -- \
      "$freed" --fix none --side-delay-ms 5
    capture_torch "torch-freed-block-record-stream-1gpu$sfx" clean 1 "{}" "--footprints $tier --gpu-times off" -- \
      "$freed" --fix record-stream --side-delay-ms 5
  done
fi
# Real training code at the default settings (scripts/gpu/real_workloads.sh has every tier): a
# CUDA-graph step with its racy and fixed input staging, a reduce-scatter's block refilled with
# and without record_stream, and one small DDP GPT step (correct: it must stay clean).
if [[ ${CAPTURE:-all} == all || ${CAPTURE:-all} == real ]]; then
  graph=$(realpath --relative-to=. "$here/tests/gpu/torch_cuda_graph.py")
  rs=$(realpath --relative-to=. "$here/tests/gpu/torch_rs_reuse.py")
  gpt=$(realpath --relative-to=. "$here/tests/gpu/torch_gpt_train.py")
  graph_lines=$(stack_lines "$graph" "stage next input")
  rs_lines=$(stack_lines "$rs" "refill" "reduce-scatter")
  capture_torch torch-graph-none-1gpu race 1 "{\"stack_lines\": $graph_lines, \"kernel_race\": true}" "" -- \
    "$graph" --fix none --delay-ms 5
  capture_torch torch-graph-wait-1gpu clean 1 "{}" "" -- "$graph" --fix wait --delay-ms 5
  capture_torch torch-rs-reuse-none-1gpu race 1 "{\"stack_lines\": $rs_lines, \"kernel_race\": true}" "" -- \
    "$rs" --fix none --comm-delay-ms 5
  capture_torch torch-rs-reuse-record-stream-1gpu clean 1 "{}" "" -- "$rs" --fix record-stream --comm-delay-ms 5
  capture_torch torch-freed-block-none-1gpu-default race 1 "{\"stack_lines\": $freed_lines, \"kernel_race\": true}" "" -- \
    "$freed" --fix none --side-delay-ms 5
  capture_torch torch-gpt-ddp-1gpu clean 1 "{}" "" -- "$gpt" --parallel ddp --optim foreach --steps 2 --warmup 1 --layers 2
fi
# The exact tier's launch memo: 80 steps take it into its steady phase, where launches the memo
# knows run uninstrumented with their memo-tier footprint (docs/footprints.md).
if [[ ${CAPTURE:-all} == all || ${CAPTURE:-all} == torch || ${CAPTURE:-all} == memo ]]; then
  capture_torch torch-freed-block-none-1gpu-memo race 1 "{\"stack_lines\": $freed_lines, \"kernel_race\": true, \"memo\": true}" \
    "--footprints exact --gpu-times off" -- "$freed" --fix none --side-delay-ms 5 --steps 80
  capture_torch torch-freed-block-record-stream-1gpu-memo clean 1 '{"memo": true}' "--footprints exact --gpu-times off" -- \
    "$freed" --fix record-stream --side-delay-ms 5 --steps 80
fi
du -sh "$out"
