#!/usr/bin/env bash
# GPU check of streamhaz-reducer, run on the accelerator machine:
#   bash scripts/gpu/reducer_check.sh build-reducer/bin/streamhaz-reducer [extra reducer flags]
# 1. Corruption: every configuration runs REPEATS times with --comm-delay-us DELAY_US on each GPU
#    count in GPUS. race and index-reset under serialize must corrupt elements in every run;
#    every other configuration must corrupt none.
# 2. Timing: each configuration once more without delay (TIMING_STEPS steps), side by side.
# Prints a Markdown table; exits 1 if a configuration broke its expectation.
set -u -o pipefail

reducer=${1:?usage: reducer_check.sh PATH/TO/streamhaz-reducer [extra flags]}
shift
extra=("$@")
GPUS=${GPUS:-"1 2"}
REPEATS=${REPEATS:-3}
DELAY_US=${DELAY_US:-2000}
CHECK_STEPS=${CHECK_STEPS:-6}
TIMING_STEPS=${TIMING_STEPS:-30}
export NCCL_NVLS_ENABLE=0  # the lent machines require NVLink multicast off

# name | flags | expect (corrupt or clean, under the delay)
configs=(
  "race|--sync race|corrupt"
  "serialize|--sync serialize|clean"
  "device|--sync device|clean"
  "host|--sync host|clean"
  "event|--sync event|clean"
  "event, 3 buffers|--sync event --ipg-buffers 3|clean"
  "serialize + index-reset|--sync serialize --bug index-reset|corrupt"
  "event + index-reset|--sync event --bug index-reset|clean"
  "serialize, reduce-scatter|--sync serialize --reduce-scatter|clean"
  "race, reduce-scatter|--sync race --reduce-scatter|corrupt"
)

# Runs the reducer and prints rank 0's summary line (empty if the run failed).
run_reducer() {
  local gpus=$1; shift
  local output
  output=$("$reducer" --nproc "$gpus" "$@" "${extra[@]}" 2>&1)
  local status=$?
  if [[ $status -ne 0 ]]; then
    echo "run failed (exit $status): $reducer --nproc $gpus $* ${extra[*]}" >&2
    echo "$output" | tail -5 >&2
    return
  fi
  echo "$output" | grep '^reducer: rank=0 '
}

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

nvidia-smi -L
echo "reducer: $reducer ${extra[*]}"
"$reducer" --help | head -1 >/dev/null || exit 1
echo "### one run with defaults (1 GPU and ${GPUS##* } GPUs)"
"$reducer" --nproc 1 "${extra[@]}" | tail -3
"$reducer" --nproc "${GPUS##* }" "${extra[@]}" | tail -4

failures=0
table=$'| configuration | GPUs | corrupted elements per run (--comm-delay-us '"$DELAY_US"$') | step ms, no delay (median) | compute ms | comm ms | overlap |\n|---|---|---|---|---|---|---|'
for gpus in $GPUS; do
  for config in "${configs[@]}"; do
    IFS='|' read -r name flags expect <<<"$config"
    counts=()
    verdict=ok
    for ((i = 1; i <= REPEATS; ++i)); do
      # shellcheck disable=SC2086
      line=$(run_reducer "$gpus" $flags --comm-delay-us "$DELAY_US" --steps "$CHECK_STEPS" --warmup 2)
      count=$(field corrupted_elements_all_ranks "$line")
      [[ -z $count ]] && count=FAILED
      counts+=("$count")
      if [[ $count == FAILED ]] || { [[ $expect == corrupt ]] && ((count == 0)); } ||
         { [[ $expect == clean ]] && ((count != 0)); }; then
        verdict=UNEXPECTED
      fi
    done
    # shellcheck disable=SC2086
    line=$(run_reducer "$gpus" $flags --steps "$TIMING_STEPS" --warmup 5)
    [[ -z $line ]] && verdict=UNEXPECTED
    mark=""
    [[ $verdict == ok ]] || { failures=$((failures + 1)); mark=", UNEXPECTED"; }
    row="| $name | $gpus | ${counts[*]} (expect $expect$mark) | $(field step_ms "$line") | $(field compute_ms "$line") | $(field comm_ms "$line") | $(field overlap "$line") |"
    echo "$row"
    table+=$'\n'"$row"
  done
done

echo
echo "$table"
echo
if ((failures > 0)); then
  echo "reducer_check: $failures configuration(s) broke their expectation"
  exit 1
fi
echo "reducer_check: all configurations as expected"
