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
# checked with the reducer's kernels.json when KERNELS is set), exact (Compute Sanitizer, with
# its launch memo), and exact-every (--exact-launches every). The exact tier's long runs (40 and
# 80 steps) reach its steady phase, where the memo serves launches uninstrumented. Then each
# tier's cost in step time on the reducer and on a PyTorch job.
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
for tier in api pointer static exact exact-every; do
  runs+=("reducer-kernelcopy-race-$tier|$tier|race|$reducer --nproc $gpus --sync race --bucket-copy kernel --steps 3 --warmup 1 --comm-delay-us 2000")
  runs+=("reducer-kernelcopy-event-$tier|$tier|clean|$reducer --nproc $gpus --sync event --bucket-copy kernel --steps 3 --warmup 1 --comm-delay-us 2000")
  runs+=("torch-freed-block-none-$tier|$tier|race|torchrun --standalone --nproc_per_node $gpus $here/tests/gpu/torch_freed_block.py --fix none --side-delay-ms 5")
  runs+=("torch-freed-block-record-stream-$tier|$tier|clean|torchrun --standalone --nproc_per_node $gpus $here/tests/gpu/torch_freed_block.py --fix record-stream --side-delay-ms 5")
done
runs+=("reducer-kernelcopy-race-exact-40|exact|race|$reducer --nproc $gpus --sync race --bucket-copy kernel --steps 40 --warmup 1 --comm-delay-us 2000")
runs+=("reducer-kernelcopy-event-exact-40|exact|clean|$reducer --nproc $gpus --sync event --bucket-copy kernel --steps 40 --warmup 1 --comm-delay-us 2000")
runs+=("torch-freed-block-none-exact-80|exact|race|torchrun --standalone --nproc_per_node $gpus $here/tests/gpu/torch_freed_block.py --fix none --side-delay-ms 5 --steps 80")
runs+=("torch-freed-block-record-stream-exact-80|exact|clean|torchrun --standalone --nproc_per_node $gpus $here/tests/gpu/torch_freed_block.py --fix record-stream --side-delay-ms 5 --steps 80")

# "exact-every" is the exact tier instrumenting every launch.
tier_options() {
  case $1 in
    exact-every) echo "--footprints exact --exact-launches every" ;;
    *) echo "--footprints $1" ;;
  esac
}

for r in "${runs[@]}"; do
  IFS='|' read -r name tier expect cmd <<< "$r"
  log=$(timeout 150 "$shz" run --force $(tier_options "$tier") --gpu-times off --out "$out/$name" -- $cmd 2>&1)
  status=$?
  corrupted=$(grep -o 'corrupted_elements_all_ranks=[0-9]*' <<< "$log" | head -1 | cut -d= -f2)
  extra=()
  [[ $tier == static && $name == reducer* && -n $kernels ]] && extra=(--kernels "$kernels")
  "$shz" check "$out/$name" "${extra[@]}" --fail-on none > "$out/$name.check" 2>&1
  verdict=$(tail -1 "$out/$name.check")
  printf '%s: exit %s, corrupted %s, expect %s | %s\n' "$name" "$status" "${corrupted:-?}" "$expect" "$verdict" | tee -a "$summary"
  grep -h 'exact footprints:' <<< "$log" | sed 's/^/    /' | tee -a "$summary"
  [[ $status -eq 0 ]] || tail -5 <<< "$log" | tee -a "$summary"
done

# What each tier costs: reducer step time (median of the timed steps) and torch_ipg_bucket step
# time, untraced and traced at each tier with GPU times off (so that only the tier differs),
# untraced again at the end (runs of one configuration differ between processes). 40 steps, so
# that most of the exact tier's steps are in its steady phase.
step_ms() { grep -o 'step_ms=[0-9.]*' | head -1 | cut -d= -f2; }
reducer_args=("$reducer" --nproc "$gpus" --sync serialize --steps 40 --warmup 2)
torch_args=(torchrun --standalone --nproc_per_node "$gpus" "$here/tests/gpu/torch_ipg_bucket.py" --sync event --steps 40)
for workload in reducer torch; do
  declare -n cmd=${workload}_args
  line="$workload step ms: untraced $("${cmd[@]}" 2>&1 | step_ms)"
  for tier in api pointer exact exact-every; do
    line+=", $tier $(timeout 150 "$shz" run --force $(tier_options $tier) --gpu-times off --out "$out/cost-$workload-$tier" -- "${cmd[@]}" 2>&1 | step_ms)"
  done
  line+=", untraced $("${cmd[@]}" 2>&1 | step_ms)"
  echo "$line" | tee -a "$summary"
done
du -sh "$out"
