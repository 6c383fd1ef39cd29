#!/usr/bin/env bash
# Kernel footprints on a GPU machine: races with a kernel on one side, each footprint tier, the
# workload's own corruption count beside `check`'s verdict, and the exact tier's slowdown.
#   bash scripts/gpu/footprints_check.sh BUILD_DIR [OUT_DIR] [GPUS]
# Workloads (each with its fixed variant):
#   - streamhaz-reducer --bucket-copy kernel: gradients enter the IPG bucket through a copy
#     kernel, so the #5523 race is kernel against all-reduce and kernel against pre-divide kernel;
#   - tests/gpu/torch_freed_block.py: a tensor read on a side stream is freed without
#     record_stream and its block refilled by a kernel on the compute stream.
# Tiers: api (no kernel footprint: the blind spot), pointer (default), static (argument bytes,
# checked with the reducer's kernels.json when KERNELS is set), exact (Compute Sanitizer).
# OUT_DIR gets one folder of traces per run, <name>.check with check's report, and summary.txt.
set -u -o pipefail
build=$(cd "${1:?usage: footprints_check.sh BUILD_DIR [OUT_DIR] [GPUS]}" && pwd)
out=${2:-${OUT:-/tmp}/footprints}
gpus=${3:-1}
here=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
shz=$build/bin/streamhaz
reducer=$build/bin/streamhaz-reducer
kernels=${KERNELS:-}
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"

# name | tier | expect (race, possible, clean) | command...
runs=()
for tier in api pointer static exact; do
  runs+=("reducer-kernelcopy-race-$tier|$tier|race|$reducer --nproc $gpus --sync race --bucket-copy kernel --steps 3 --warmup 1 --comm-delay-us 2000")
  runs+=("reducer-kernelcopy-event-$tier|$tier|clean|$reducer --nproc $gpus --sync event --bucket-copy kernel --steps 3 --warmup 1 --comm-delay-us 2000")
  runs+=("torch-freed-block-none-$tier|$tier|race|torchrun --standalone --nproc_per_node $gpus $here/tests/gpu/torch_freed_block.py --fix none --side-delay-ms 5")
  runs+=("torch-freed-block-record-stream-$tier|$tier|clean|torchrun --standalone --nproc_per_node $gpus $here/tests/gpu/torch_freed_block.py --fix record-stream --side-delay-ms 5")
done

for r in "${runs[@]}"; do
  IFS='|' read -r name tier expect cmd <<< "$r"
  start=$(date +%s.%N)
  log=$(timeout 150 "$shz" run --force --footprints "$tier" --gpu-times off --out "$out/$name" -- $cmd 2>&1)
  status=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  corrupted=$(grep -o 'corrupted_elements_all_ranks=[0-9]*' <<< "$log" | head -1 | cut -d= -f2)
  extra=()
  [[ $tier == static && $name == reducer* && -n $kernels ]] && extra=(--kernels "$kernels")
  "$shz" check "$out/$name" "${extra[@]}" --fail-on none > "$out/$name.check" 2>&1
  verdict=$(tail -1 "$out/$name.check")
  printf '%s: exit %s, %.1f s, corrupted %s, expect %s | %s\n' "$name" "$status" "$secs" "${corrupted:-?}" "$expect" "$verdict" | tee -a "$summary"
  [[ $status -eq 0 ]] || tail -5 <<< "$log" | tee -a "$summary"
done

# The exact tier's slowdown: reducer step time (median of the timed steps) untraced, under the
# default tier and under exact, and a PyTorch job's wall time.
step_ms() { grep -o 'step_ms=[0-9.]*' | head -1 | cut -d= -f2; }
args=(--nproc "$gpus" --sync serialize --steps 8 --warmup 2)
plain=$("$reducer" "${args[@]}" | step_ms)
pointer=$("$shz" run --force --out "$out/slow-pointer" -- "$reducer" "${args[@]}" | step_ms)
exact=$(timeout 150 "$shz" run --force --footprints exact --out "$out/slow-exact" -- "$reducer" "${args[@]}" | step_ms)
echo "reducer step ms: untraced $plain, pointer (default) $pointer, exact $exact" | tee -a "$summary"
python3 - "$plain" "$pointer" "$exact" <<'PY' | tee -a "$summary"
import sys
p, d, e = map(float, sys.argv[1:])
print(f"reducer step time ratio: default/untraced {d/p:.3f}, exact/untraced {e/p:.3f}")
PY
torch_args=("$here/tests/gpu/torch_ipg_bucket.py" --sync event --steps 8)
plain=$(torchrun --standalone --nproc_per_node "$gpus" "${torch_args[@]}" 2>&1 | step_ms)
pointer=$("$shz" run --force --out "$out/slow-torch-pointer" -- torchrun --standalone --nproc_per_node "$gpus" "${torch_args[@]}" 2>&1 | step_ms)
exact=$(timeout 150 "$shz" run --force --footprints exact --out "$out/slow-torch-exact" -- torchrun --standalone --nproc_per_node "$gpus" "${torch_args[@]}" 2>&1 | step_ms)
echo "torch_ipg_bucket step ms: untraced $plain, pointer (default) $pointer, exact $exact" | tee -a "$summary"
du -sh "$out"
