#!/usr/bin/env bash
# The driver wrappers (`streamhaz run --driver-wrappers on`, docs/tracer.md "The hot calls:
# wrappers, not CUPTI") on real jobs, on a GPU machine:
#   bash scripts/gpu/driver_wrappers_check.sh BUILD_DIR [OUT_DIR]
# 1. (real) scripts/gpu/real_workloads.sh at the pointer tier with the wrappers recording from the first
#    call (STREAMHAZ_GPU_TIMES=off): every verdict as expected and
#    every output as untraced.
# 2. (gpt) GPT FSDP2, DDP and DDP with torch.compile (RUNS runs each way, default 2, 30 steps, --self-profile on), the wrappers
#    taking over after the timed steps against CUPTI's callbacks throughout: every run exits 0
#    with the untraced loss (2 decimals), the same number of operations each way, `check` clean each way, and
#    the wrappers recorded hot calls (driver_calls_wrapped).
# 3. (bypass) The wrappers' audit (tracer/glue/wrapper_audit.h): tests/gpu/wrapper_bypass_probe launches
#    kernels for 4 s through the runtime and, with `around`, every other one through the driver's
#    own cuLaunchKernel found around the wrappers. `through`: exit 0, `check` clean, the trace's
#    audits saw calls in the wrappers and none around them; `around`: exit 0 (every kernel ran),
#    `check` exit 1 naming the calls that may be missing, CUPTI recording from the audit on.
# PARTS picks parts (default real,gpt,bypass). Prints one line per run and check; exits 1 when any
# does not hold.
set -u -o pipefail
build=$(cd "${1:?usage: driver_wrappers_check.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp}/driver_wrappers_check}
here=$(cd "$(dirname "$0")/../.." && pwd)
shz=$build/bin/streamhaz
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p "$out"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The audit's counts, as `inspect` prints them ("driver wrappers: N audit(s) ...").
audit_counts() { "$shz" inspect "$1" 2>/dev/null | grep -o "driver wrappers: .*" | tail -1; }
part() { [[ ",${PARTS:-real,gpt,bypass}," == *",$1,"* ]]; }

if part real; then
  STREAMHAZ_DRIVER_WRAPPERS=on STREAMHAZ_GPU_TIMES=off STEPS=3 \
    bash "$here/scripts/gpu/real_workloads.sh" "$build" "$out/real" pointer > "$out/real.log" 2>&1 || fail "real_workloads.sh"
  sed 's/^/  /' "$out/real/summary.txt"
  # Each line ends with "program exit N, output as untraced: yes | ..." and has its verdict.
  grep -q "output as untraced: no" "$out/real/summary.txt" && fail "an output changed under the wrappers"
  # expect clean: check exit 0; expect race: check exit 1.
  awk -F' [|] ' '/ expect / { want = ($3 ~ /clean/) ? "check exit 0" : "check exit 1"; if ($4 != want) print $1 ": " $4 }' \
    "$out/real/summary.txt" | while read -r wrong; do echo "FAIL: verdict $wrong"; done | tee "$out/wrong.txt"
  [[ -s $out/wrong.txt ]] && failed=1
fi

operations() { "$shz" inspect "$1" 2>&1 | sed -n 's/.*operations: \([0-9]*\).*/\1/p' | sort -n | tail -1; }
# The loss to 2 decimals (bf16 attention's backward is not deterministic run to run).
loss() { grep -o 'loss=[0-9.]*' | head -1 | awk -F= '{ printf "%.2f", $2 }'; }
# label | the training script's options (ddp-compile: Inductor's Triton kernels, launched by Triton's
# own launcher, which looks the driver's functions up itself)
jobs=("fsdp2|--parallel fsdp2" "ddp|--parallel ddp" "ddp-compile|--parallel ddp --compile --layers 2")
part gpt || jobs=()
for entry in "${jobs[@]}"; do
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
           "operations $n, check exit $check, wrapped calls listed: $wrapped $(audit_counts "$dir")"
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
ways=(through around)
part bypass || ways=()
for way in "${ways[@]}"; do
  dir=$out/bypass-$way
  log=$("$shz" run --force --gpu-times off --out "$dir" -- "$build/bin/wrapper_bypass_probe" "$way" 4 2>&1); rc=$?
  "$shz" check --no-sync "$dir" > "$dir.check" 2>&1; check=$?
  counts=$(audit_counts "$dir")
  echo "bypass probe $way: exit $rc ($(tail -1 <<<"$log")), check exit $check, $counts"
  ((rc == 0)) || fail "bypass probe $way: exit $rc"
  grep -q 'wrappers: [1-9][0-9]* audit' <<<"$counts" || fail "bypass probe $way: no audit ran"
  if [[ $way == through ]]; then
    ((check == 0)) || fail "bypass probe through: check exit $check"
    grep -q ' 0 around' <<<"$counts" || fail "bypass probe through: calls seen around the wrappers"
    grep -q ' [1-9][0-9]* call(s) seen in' <<<"$counts" || fail "bypass probe through: the audit saw no call"
  else
    ((check == 1)) || fail "bypass probe around: check exit $check"
    grep -q "may be missing" "$dir.check" || fail "bypass probe around: check does not name the missing calls"
    grep -q ' [1-9][0-9]* around' <<<"$counts" || fail "bypass probe around: no call seen around the wrappers"
  fi
done
((failed)) && { echo "SOME FAILED"; exit 1; }
echo "ALL PASSED"
