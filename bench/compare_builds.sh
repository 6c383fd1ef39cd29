#!/usr/bin/env bash
# Two builds of the tracer against each other on real training steps (GPU machine), in one call:
#   bash bench/compare_builds.sh BUILD_A BUILD_B [OUT_DIR]
# A round runs bench/real_step_cost.sh's in-process measurement (--tracer-ab: traced and paused
# steps alternating in one process) with BUILD_A, then with BUILD_B; ROUNDS rounds (default 3),
# so that the machine's drift over minutes (20-30 % between neighbouring runs on the lent
# machines) falls on both builds alike. JOBS (default gpt-fsdp2,ipg-bucket) and SETTINGS (default:
# default) are real_step_cost.sh's. Prints every run's ratio as it comes, then per job and
# setting both builds' ratios (median traced step over median paused step; and the median of
# each traced step's ratio to its paused neighbours) and traced step times side by side.
set -u -o pipefail
build_a=$(cd "${1:?usage: compare_builds.sh BUILD_A BUILD_B [OUT_DIR]}" && pwd)
build_b=$(cd "${2:?usage: compare_builds.sh BUILD_A BUILD_B [OUT_DIR]}" && pwd)
out=${3:-${OUT:-/tmp}/compare_builds}
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-3}
jobs=${JOBS:-gpt-fsdp2,ipg-bucket}
settings=${SETTINGS:-default}
mkdir -p "$out"
: > "$out/runs.txt"
for ((round = 1; round <= rounds; ++round)); do
  for label in A B; do
    build=$build_a
    [[ $label == B ]] && build=$build_b
    run_out=$out/round$round-$label
    JOBS=$jobs SETTINGS=$settings PAIRS=0 AB_RUNS=1 WARMUP_RUNS=0 \
      bash "$here/real_step_cost.sh" "$build" "$run_out" > "$run_out.log" 2>&1
    for ab in "$run_out"/*-ab.txt; do
      [[ -s $ab ]] || continue
      name=$(basename "$ab" -ab.txt)
      echo "$label $round $name $(tail -1 "$ab")" | tee -a "$out/runs.txt"
    done
  done
done
python3 - "$out/runs.txt" "$build_a" "$build_b" <<'PY'
import collections, re, statistics, sys
path, build_a, build_b = sys.argv[1:]
runs = collections.defaultdict(lambda: collections.defaultdict(list))  # job-setting -> build -> [fields]
for line in open(path):
    label, _, name, rest = line.split(" ", 3)
    fields = dict(re.findall(r"(\w+)=([0-9.]+)", rest))
    if "ratio" in fields:
        runs[name][label].append({k: float(v) for k, v in fields.items()})
print(f"A: {build_a}\nB: {build_b}")
if not runs:
    sys.exit("compare_builds: no run gave a measurement (see the round*.log files)")
for name, by_build in sorted(runs.items()):
    def show(label):
        rs = by_build.get(label, [])
        if not rs:
            return "no measurement"
        ratios = ", ".join(f"{r['ratio']:.3f}" for r in rs)
        traced = statistics.median(r["traced_ms"] for r in rs)
        # The pair ratio (each traced step over its paused neighbours) leaves out drift within a run.
        pairs = [r["pair_ratio"] for r in rs if "pair_ratio" in r]
        paired = f", pair ratio {statistics.median(pairs):.3f} ({', '.join(f'{p:.3f}' for p in pairs)})" if pairs else ""
        return (f"ratio {statistics.median(r['ratio'] for r in rs):.3f} ({ratios}){paired}, "
                f"traced steps {traced:.2f} ms")
    print(f"{name}: A {show('A')}; B {show('B')}")
PY
