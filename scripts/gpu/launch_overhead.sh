#!/usr/bin/env bash
# Host time the tracer adds per API call, split into CUPTI's part and the tracer's, on the
# accelerator machine:
#   bash scripts/gpu/launch_overhead.sh BUILD_DIR [ROUNDS] [BATCHES]
# Runs bench/tracer_launch_overhead (empty-kernel launch loop, event-record loop; BATCHES
# batches of 256 calls, default 2500, several sampling periods long) ROUNDS times (default 8)
# under each configuration, interleaved so that drift hits all alike, pinned to a few cores.
# Configurations: untraced; the CUPTI floor library (bench/cupti_floor_injection.cpp) with
# growing mixes of callbacks and activity; the tracer in each GPU-times mode.
# Prints, per configuration, the median over rounds of each run's median ns per call and what
# it adds to the untraced one, the spread of run medians, their lower quartile (q1), the
# median of run means (sampled GPU times show there), and the event-record loop's median.
# On the H200 VMs a process's launch cost is bimodal (about 3.5 or 4.5 µs untraced, fixed for
# the process's life), so config medians over a dozen runs move by some 0.4 µs; q1 compares
# the faster state alone.
# CONFIGS="a b ..." runs a subset; VERBOSE=1 prints every run.
set -u -o pipefail
build=$(cd "${1:?usage: launch_overhead.sh BUILD_DIR [ROUNDS] [BATCHES]}" && pwd)
rounds=${2:-8}
batches=${3:-2500}
bench=$build/bin/tracer_launch_overhead
floor=$build/lib/libstreamhaz-cupti-floor.so
tracer=$build/lib/libstreamhaz-tracer.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pin=()
[[ $(nproc) -ge 8 ]] && pin=(taskset -c 4-7)  # off core 0 (interrupts), room for CUPTI's threads

configs=(untraced floor:none floor:launch floor:driver floor:kernel floor:launch,kernel,copies,period
         tracer:all tracer:sampled tracer:off)
[[ -n ${CONFIGS:-} ]] && read -r -a configs <<< "$CONFIGS"

run_one() {  # config -> one line of the benchmark
  local c=$1 out=$tmp/trace.$RANDOM
  case $c in
    untraced) ${pin[@]+"${pin[@]}"} "$bench" "$batches" 256 ${ARGS:-} ;;
    floor:*) STREAMHAZ_FLOOR=${c#floor:} CUDA_INJECTION64_PATH=$floor ${pin[@]+"${pin[@]}"} "$bench" "$batches" 256 ${ARGS:-} ;;
    tracer:*)  # tracer:GPU_TIMES[:FOOTPRINTS], footprints pointer (the default) unless given
      local spec=${c#tracer:} tier=pointer
      [[ $spec == *:* && $spec != sampled:*/* ]] && { tier=${spec##*:}; spec=${spec%:*}; }
      STREAMHAZ_GPU_TIMES=$spec STREAMHAZ_FOOTPRINTS=$tier STREAMHAZ_OUT_DIR=$out CUDA_INJECTION64_PATH=$tracer \
                ${pin[@]+"${pin[@]}"} "$bench" "$batches" 256 ${ARGS:-} ;;
  esac
  rm -rf "$out"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
echo "rounds=$rounds batches=$batches pinned=${pin[*]:-no}"
for ((r = 1; r <= rounds; ++r)); do
  for c in "${configs[@]}"; do
    echo "$c $(run_one "$c")" >> "$tmp/runs.txt"
  done
done
[[ -n ${VERBOSE:-} ]] && sort -s -k1,1 "$tmp/runs.txt"

python3 - "$tmp/runs.txt" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    config, rest = line.split(" ", 1)
    fields = dict(re.findall(r"(\w+)=([\d.]+)", rest))
    if "launch_ns_median" not in fields:
        print(f"unparsed: {line.strip()}")
        continue
    runs.setdefault(config, []).append({k: float(v) for k, v in fields.items()})
base = runs.get("untraced")
if not base:
    sys.exit("no untraced runs")
med = lambda config, key: statistics.median(r[key] for r in runs[config])
def quartile(config, key):  # lower quartile of run medians: the machine's faster state
    xs = sorted(r[key] for r in runs[config])
    return xs[(len(xs) - 1) // 4]
bl, bq = med("untraced", "launch_ns_median"), quartile("untraced", "launch_ns_median")
bm, br = med("untraced", "launch_mean"), med("untraced", "record_ns_median")
print(f"{'configuration':34} {'launch ns':>9} {'added':>6} {'run medians':>12} {'q1':>5} {'added':>6} "
      f"{'mean':>5} {'added':>6} {'record':>6} {'added':>5}")
for config, xs in runs.items():
    l = sorted(x["launch_ns_median"] for x in xs)
    lm, q, mean = med(config, "launch_ns_median"), quartile(config, "launch_ns_median"), med(config, "launch_mean")
    rec = med(config, "record_ns_median")
    print(f"{config:34} {lm:9.0f} {lm - bl:+6.0f} {l[0]:5.0f}..{l[-1]:<5.0f} {q:5.0f} {q - bq:+6.0f} "
          f"{mean:5.0f} {mean - bm:+6.0f} {rec:6.0f} {rec - br:+5.0f}")
PY
