#!/usr/bin/env bash
# The driver wrappers (`streamhaz run --driver-wrappers on`, docs/tracer.md "The hot calls:
# wrappers, not CUPTI") on real jobs, on a GPU machine:
#   bash scripts/gpu/driver_wrappers_check.sh BUILD_DIR [OUT_DIR]
# 1. scripts/gpu/real_workloads.sh at the pointer tier with the wrappers recording from the first
#    call (STREAMHAZ_DRIVER_WRAPPERS=on STREAMHAZ_GPU_TIMES=off): every verdict as expected and
#    every output as untraced.
# 2. GPT FSDP2, DDP and DDP with torch.compile (RUNS runs each way, default 2, 30 steps, --self-profile on), the wrappers
#    taking over after the timed steps against CUPTI's callbacks throughout: every run exits 0
#    with the untraced loss (2 decimals), the same number of operations each way, `check` clean each way, and
#    the wrappers recorded hot calls (driver_calls_wrapped).
# Prints one line per run and check; exits 1 when any does not hold.
set -u -o pipefail
build=$(cd "${1:?usage: driver_wrappers_check.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp}/driver_wrappers_check}
here=$(cd "$(dirname "$0")/../.." && pwd)
shz=$build/bin/streamhaz
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p "$out"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

STREAMHAZ_DRIVER_WRAPPERS=on STREAMHAZ_GPU_TIMES=off STEPS=3 \
  bash "$here/scripts/gpu/real_workloads.sh" "$build" "$out/real" pointer > "$out/real.log" 2>&1 || fail "real_workloads.sh"
sed 's/^/  /' "$out/real/summary.txt"
# Each line ends with "program exit N, output as untraced: yes | ..." and has its verdict.
grep -q "output as untraced: no" "$out/real/summary.txt" && fail "an output changed under the wrappers"
# expect clean: check exit 0; expect race: check exit 1.
awk -F' [|] ' '/ expect / { want = ($3 ~ /clean/) ? "check exit 0" : "check exit 1"; if ($4 != want) print $1 ": " $4 }' \
  "$out/real/summary.txt" | while read -r wrong; do echo "FAIL: verdict $wrong"; done | tee "$out/wrong.txt"
[[ -s $out/wrong.txt ]] && failed=1

operations() { "$shz" inspect "$1" 2>&1 | sed -n 's/.*operations: \([0-9]*\).*/\1/p' | sort -n | tail -1; }
# The loss to 2 decimals (bf16 attention's backward is not deterministic run to run).
loss() { grep -o 'loss=[0-9.]*' | head -1 | awk -F= '{ printf "%.2f", $2 }'; }
# label | the training script's options (ddp-compile: Inductor's Triton kernels, launched by Triton's
# own launcher, which looks the driver's functions up itself)
for entry in "fsdp2|--parallel fsdp2" "ddp|--parallel ddp" "ddp-compile|--parallel ddp --compile --layers 2"; do
  parallel=${entry%%|*}
  read -r -a options <<< "${entry#*|}"
  job=(torchrun --standalone --nproc_per_node 1 "$here/tests/gpu/torch_gpt_train.py" "${options[@]}"
       --optim foreach --steps 30 --warmup 2)
  untraced=$("${job[@]}" 2>&1 | loss)
  declare -A ops=()
  for ((r = 1; r <= ${RUNS:-2}; ++r)); do
    for wrappers in on off; do
      dir=$out/$parallel-$wrappers-$r
      log=$("$shz" run --force --self-profile on --driver-wrappers "$wrappers" --out "$dir" -- "${job[@]}" 2>&1); rc=$?
      "$shz" check "$dir" > "$dir.check" 2>&1; check=$?
      n=$(operations "$dir")
      wrapped=$("$shz" inspect "$dir" 2>&1 | grep -c "by the tracer's wrappers")
      echo "$parallel wrappers $wrappers run $r: exit $rc, loss $(loss <<<"$log") (untraced $untraced)," \
           "operations $n, check exit $check, wrapped calls listed: $wrapped"
      ((rc == 0)) || fail "$parallel wrappers $wrappers: exit $rc"
      [[ $(loss <<<"$log") == "$untraced" ]] || fail "$parallel wrappers $wrappers: loss differs"
      ((check == 0)) || { fail "$parallel wrappers $wrappers: check exit $check"; grep -A2 "^streamhaz: race" "$dir.check" | head -6; }
      [[ $wrappers == off ]] || ((wrapped > 0)) || fail "$parallel: the wrappers recorded nothing"
      ops[$wrappers]+=" $n"
    done
  done
  [[ $(tr ' ' '\n' <<<"${ops[on]} ${ops[off]}" | sort -u | grep -c .) == 1 ]] ||
    fail "$parallel: operation counts differ (on:${ops[on]}, off:${ops[off]})"
done
((failed)) && { echo "SOME FAILED"; exit 1; }
echo "ALL PASSED"
