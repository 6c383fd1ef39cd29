#!/usr/bin/env bash
# Holds streamhaz's verdicts against the reducer's exact self-check, on a GPU machine:
#   bash scripts/gpu/ground_truth.sh BUILD_DIR [RUNS] [DELAY_US] [GPUS]
# Every mode runs RUNS times with the comm delay (the race happens) and RUNS times without it
# (the race stays latent), each run traced and checked. Prints a table of mode, runs, runs
# with corrupted elements, runs where `streamhaz check` reported a race; exits 1 if a run of a
# mode that can corrupt went unflagged or a run of a correct mode was flagged.
set -u -o pipefail
build=$(cd "${1:?usage: ground_truth.sh BUILD_DIR [RUNS] [DELAY_US] [GPUS]}" && pwd)
runs=${2:-5}
delay=${3:-2000}
gpus=${4:-2}
export NCCL_NVLS_ENABLE=0
shz=$build/bin/streamhaz
reducer=$build/bin/streamhaz-reducer
tmp=$(mktemp -d)
bad=0

# mode label | reducer arguments | can corrupt
modes=("race|--sync race|yes"
       "serialize|--sync serialize|no"
       "device|--sync device|no"
       "host|--sync host|no"
       "event|--sync event|no"
       "event, 3 buffers|--sync event --ipg-buffers 3|no"
       "serialize + index-reset|--sync serialize --bug index-reset|yes"
       "event + index-reset|--sync event --bug index-reset|no")

printf '| mode | GPUs | comm delay µs | runs | runs with corrupted elements | runs flagged by check | expected |\n'
printf '|---|---|---|---|---|---|---|\n'
for m in "${modes[@]}"; do
  IFS='|' read -r label args can_corrupt <<< "$m"
  for d in "$delay" 0; do
    corrupt_runs=0 flagged_runs=0
    for i in $(seq "$runs"); do
      dir="$tmp/run"
      rm -rf "$dir"
      log=$("$shz" run --out "$dir" -- "$reducer" --nproc "$gpus" $args --steps 4 --warmup 1 --comm-delay-us "$d" 2>&1)
      corrupted=$(grep -o 'corrupted_elements_all_ranks=[0-9]*' <<< "$log" | head -1 | cut -d= -f2)
      [[ -n $corrupted ]] || { echo "reducer failed: $log" | tail -5; bad=1; continue; }
      [[ $corrupted -gt 0 ]] && corrupt_runs=$((corrupt_runs + 1))
      "$shz" check "$dir" > "$tmp/check.txt" 2>&1
      v=$?
      [[ $v -eq 2 ]] && { echo "check failed:"; tail -3 "$tmp/check.txt"; bad=1; }
      [[ $v -eq 1 ]] && flagged_runs=$((flagged_runs + 1))
    done
    if [[ $can_corrupt == yes ]]; then
      expected="all flagged"
      [[ $flagged_runs -eq $runs ]] || bad=1
    else
      expected="none flagged, none corrupted"
      [[ $flagged_runs -eq 0 && $corrupt_runs -eq 0 ]] || bad=1
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$gpus" "$d" "$runs" "$corrupt_runs" "$flagged_runs" "$expected"
  done
done
rm -rf "$tmp"
[[ $bad -eq 0 ]] && echo "ground_truth: every verdict as expected" || echo "ground_truth: MISMATCH"
exit $bad
