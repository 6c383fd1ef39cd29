#!/usr/bin/env bash
# The tracer's cost on real PyTorch training steps (GPU machine):
#   bash bench/real_step_cost.sh BUILD_DIR [OUT_DIR]
# Each job runs untraced and traced in alternating pairs (PAIRS, default 5) for every setting
# (SETTINGS, default: the defaults, then each cost source switched off in turn, then the tracer
# loaded but disabled, then CUPTI's callbacks instead of the driver wrappers); each run prints the median step time of its steps after the warm-up.
# Prints, per job and setting, the median of the pairs' traced/untraced ratios, their range,
# and the median step times. JOBS picks jobs: gpt-ddp, gpt-fsdp2 (torch_gpt_train.py), ipg-bucket
# (torch_ipg_bucket.py, per-buffer events). PROFILE=1 first runs each job once traced with
# --self-profile on and prints where the tracer's host time went (streamhaz inspect). Each job
# first runs WARMUP_RUNS (default 1) untraced and traced pairs that are not counted.
# AB_RUNS (default 2) runs per job and setting measure in one process instead (--tracer-ab; the
# settings take turns run by run):
# AB_STEPS steps (default 60), every other one after the warm-up with the tracer paused; the
# machine's drift between separate runs (20-30 % between neighbouring runs) cancels out there.
# AB_RUNS=0 skips them; PAIRS=0 skips the separate runs. TRACER_AB_LEVELS=0,2 (or 2,1) in the
# environment splits the in-process ratio into the tracer's own work (or CUPTI's dispatch alone).
set -u -o pipefail
build=$(cd "${1:?usage: real_step_cost.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp}/real_step_cost}
here=$(cd "$(dirname "$0")/.." && pwd)
pairs=${PAIRS:-5}
steps=${STEPS:-10}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
shz=$build/bin/streamhaz
mkdir -p "$out"
launch="torchrun --standalone --nproc_per_node 1"
declare -A job_cmd=(
  [gpt-ddp]="$launch $here/tests/gpu/torch_gpt_train.py --parallel ddp --optim foreach --steps $steps --warmup 2"
  [gpt-fsdp2]="$launch $here/tests/gpu/torch_gpt_train.py --parallel fsdp2 --optim foreach --steps $steps --warmup 2"
  [ipg-bucket]="$launch $here/tests/gpu/torch_ipg_bucket.py --sync event --steps $steps"
)
ab_steps=${AB_STEPS:-60}
declare -A job_ab_cmd=(
  [gpt-ddp]="$launch $here/tests/gpu/torch_gpt_train.py --parallel ddp --optim foreach --steps $ab_steps --warmup 6 --tracer-ab"
  [gpt-fsdp2]="$launch $here/tests/gpu/torch_gpt_train.py --parallel fsdp2 --optim foreach --steps $ab_steps --warmup 6 --tracer-ab"
  [ipg-bucket]="$launch $here/tests/gpu/torch_ipg_bucket.py --sync event --steps $ab_steps --tracer-ab 6"
)
# name | how the traced run is made
settings=(
  "default|"
  "stacks-off|--stacks off"
  "gpu-times-off|--gpu-times off"
  "api-tier|--footprints api"
  "nothing|--footprints api --stacks off --gpu-times off"
  "no-wrappers|--driver-wrappers off"
  "gpu-times-off-no-wrappers|--gpu-times off --driver-wrappers off"
  "disabled|DISABLE"
  "allocator-history|--allocator-history on"
)
selected() { [[ -z ${2:-} || ",$2," == *",$1,"* ]]; }
# "STEP_MS HOST_MS" of a run (the host's part: time to issue a step, up to its synchronize)
step_ms() {
  sed -n 's/.*step_ms=\([0-9.]*\)\( host_ms=\([0-9.]*\)\)\{0,1\}.*/\1 \3/p' | tail -1
}
for job in gpt-ddp gpt-fsdp2 ipg-bucket; do
  selected "$job" "${JOBS:-}" || continue
  if [[ ${PROFILE:-0} == 1 ]]; then
    echo "== $job: one run traced with --self-profile on"
    "$shz" run --force --self-profile on --out "$out/profile-$job" -- ${job_cmd[$job]} 2>&1 | grep -E "step_ms|streamhaz:" | sed 's/^/  /'
    "$shz" inspect "$out/profile-$job" | sed -n "/tracer's own time/,/records by kind/p" | grep -v "records by kind"
  fi
  # A fresh machine's first runs are slower (an FSDP2 step measured 30-34 ms in the first
  # minutes, 26 ms after): one untraced and one traced run first, not counted.
  for ((w = 0; w < ${WARMUP_RUNS:-1}; ++w)); do
    ${job_cmd[$job]} > /dev/null 2>&1
    "$shz" run --force --out "$out/trace" -- ${job_cmd[$job]} > /dev/null 2>&1
  done
  # In one process: the settings take turns run by run, so that the machine's drift over minutes
  # falls on each alike.
  for ((r = 1; r <= ${AB_RUNS:-2}; ++r)); do
    for entry in "${settings[@]}"; do
      name=${entry%%|*}; args=${entry#*|}
      selected "$name" "${SETTINGS:-}" && [[ $args != DISABLE ]] || continue
      ab=$out/$job-$name-ab.txt
      ((r > 1)) || : > "$ab"
      "$shz" run --force $args --out "$out/trace" -- ${job_ab_cmd[$job]} 2>&1 | grep "tracer_ab" | tail -1 >> "$ab"
    done
  done
  for entry in "${settings[@]}"; do
    name=${entry%%|*}; args=${entry#*|}
    selected "$name" "${SETTINGS:-}" || continue
    if [[ $args != DISABLE && ${AB_RUNS:-2} -gt 0 ]]; then
      python3 - "$job" "$name" "$out/$job-$name-ab.txt" <<'PY'
import re, statistics, sys
job, name, path = sys.argv[1:]
runs = [dict(re.findall(r"(\w+)=([0-9.]+)", line)) for line in open(path)]
runs = [r for r in runs if "pair_ratio" in r]
if runs:
    pick = lambda key: [float(r[key]) for r in runs]
    print(f"{job:10} {name:14} in one process: ratio {statistics.median(pick('ratio')):.3f} "
          f"(pair ratio {statistics.median(pick('pair_ratio')):.3f}; per run " + ", ".join(f"{x:.3f}" for x in pick('ratio'))
          + f"; {int(pick('pairs')[0])} pairs a run); step ms traced {statistics.median(pick('traced_ms')):.2f}, "
          f"paused {statistics.median(pick('paused_ms')):.2f}")
PY
    fi
    ((pairs > 0)) || continue
    results=$out/$job-$name.txt
    : > "$results"
    for ((p = 1; p <= pairs; ++p)); do
      base=$(${job_cmd[$job]} 2>&1 | step_ms)
      if [[ $args == DISABLE ]]; then
        traced=$(STREAMHAZ_DISABLE=1 "$shz" run --force --out "$out/trace" -- ${job_cmd[$job]} 2>&1 | step_ms)
      else
        traced=$("$shz" run --force $args --out "$out/trace" -- ${job_cmd[$job]} 2>&1 | step_ms)
      fi
      echo "$base $traced" >> "$results"
    done
    python3 - "$job" "$name" "$results" <<'PY'
import statistics, sys
job, name, path = sys.argv[1:]
# columns: untraced step, [untraced host,] traced step[, traced host]
rows, hosts = [], []
for line in open(path):
    f = [float(x) for x in line.split()]
    if len(f) == 2:
        rows.append((f[0], f[1]))
    elif len(f) == 4:
        rows.append((f[0], f[2]))
        hosts.append((f[1], f[3]))
if not rows:
    print(f"{job:10} {name:14} no measurement"); sys.exit(0)
ratios = [b / a for a, b in rows]
print(f"{job:10} {name:14} ratio {statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f}, {len(rows)} pairs); "
      f"step ms untraced {statistics.median(a for a, _ in rows):.2f}, traced {statistics.median(b for _, b in rows):.2f}"
      + (f"; host ms untraced {statistics.median(a for a, _ in hosts):.2f}, traced {statistics.median(b for _, b in hosts):.2f}"
         if hosts else ""))
PY
  done
done
rm -rf "$out/trace"
