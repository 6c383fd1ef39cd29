#!/usr/bin/env bash
# Where a traced training step's CPU time goes, by perf's sampling (GPU machine):
#   PERF=/path/to/perf bash scripts/gpu/perf_profile.sh BUILD_DIR [OUT_DIR]
# Runs the GPT job (JOB: gpt-fsdp2, the default, or gpt-ddp; STEPS steps, default 400) under
# `perf record` without call graphs, untraced and then traced with each of CONFIGS (default:
# "default stacks-off gpu-times-off"), sampling from DELAY_MS (default 17000: past the import,
# set-up and warm-up) to the end. A run's step time on these machines moves by a factor of two
# within seconds (other tenants); the share of CPU samples each object takes does not, so this is
# what compares settings and builds. Prints per run the objects' shares and, for traced runs,
# the samples in the tracer's objects per 100 samples of everything else (the program's own
# work): libstreamhaz-tracer (the callbacks, records, stacks), libcupti (CUPTI's dispatch and
# activity) and libz (compression, on the flush thread, off the program's threads); then the
# tracer's hottest symbols, and the threads their samples fell on. `self-profile` is the default
# with the tracer's own counters on (--self-profile), whose sums by phase it prints (inspect);
# `gpu-times:SPEC` the default with --gpu-times SPEC; `no-wrappers` and `gpu-times-off-no-wrappers` the
# default and `--gpu-times off` with --driver-wrappers off (CUPTI's callbacks throughout).
# A configuration `floor:MIX` runs CUPTI alone instead of the tracer
# (bench/cupti_floor_injection.cpp, MIX as its STREAMHAZ_FLOOR, commas and all), to tell CUPTI's
# part from the tracer's: e.g. CONFIGS="default floor:launch floor:launch,kernel,copies,briefly".
# A suffix picks the libcupti the run binds: `@wheel` (PyTorch's) or `@toolkit` (the CUDA
# toolkit's); without one, a tracer binds the toolkit's and a floor PyTorch's.
#
# The GPU machine has no perf: bring a perf binary and the libraries it needs (ldd) in a folder,
# PERF_LIBS; they are on the library path of perf alone, never of the program.
set -u -o pipefail
build=$(cd "${1:?usage: perf_profile.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp}/perf_profile}
here=$(cd "$(dirname "$0")/../.." && pwd)
perf=${PERF:-perf}
steps=${STEPS:-400}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
mkdir -p "$out"
case ${JOB:-gpt-fsdp2} in
  gpt-fsdp2) parallel=fsdp2 ;;
  gpt-ddp) parallel=ddp ;;
  *) echo "perf_profile: JOB is gpt-fsdp2 or gpt-ddp" >&2; exit 2 ;;
esac
job=(torchrun --standalone --nproc_per_node 1 "$here/tests/gpu/torch_gpt_train.py" --parallel "$parallel"
     --optim foreach --steps "$steps" --warmup 2)
program_libs=${LD_LIBRARY_PATH:-}

record() {  # name, command...
  local name=$1; shift
  echo "== $name"
  LD_LIBRARY_PATH=${PERF_LIBS:-$program_libs} "$perf" record -q -F "${FREQ:-1999}" -D "${DELAY_MS:-17000}" \
    -o "$out/$name.data" -- env LD_LIBRARY_PATH="$program_libs" "$@" > "$out/$name.log" 2>&1
  local status=$?
  grep -o "step_ms=[0-9.]*" "$out/$name.log"
  # A run that failed (a tracer or streamhaz that cannot start, say) shows why, not just "no samples".
  [[ $status -eq 0 ]] || { echo "  exit status $status; its output ends:"; tail -5 "$out/$name.log" | sed 's/^/    /'; }
  LD_LIBRARY_PATH=${PERF_LIBS:-$program_libs} "$perf" report -i "$out/$name.data" --no-children --sort dso --stdio -n \
    2>/dev/null | grep -v '^#' | grep -v '^$' > "$out/$name-dso.txt"
  LD_LIBRARY_PATH=${PERF_LIBS:-$program_libs} "$perf" report -i "$out/$name.data" --no-children --sort dso,sym --stdio \
    2>/dev/null | grep -E 'libstreamhaz-tracer|libcupti' | head -"${SYMBOLS:-12}" | cut -c1-160 > "$out/$name-sym.txt"
  # Which threads pay it, by name: the program's (python, pt_autograd_*) or the tracer's own
  # (shz-flush, shz-gpu-times). CUPTI's worker thread keeps the process's name: a `python` row
  # holds its samples too, a `pt_autograd_*` row only the program's.
  LD_LIBRARY_PATH=${PERF_LIBS:-$program_libs} "$perf" report -i "$out/$name.data" --no-children --sort comm,dso --stdio \
    2>/dev/null | grep -E 'libstreamhaz-tracer|libcupti|libz' | head -8 | cut -c1-120 > "$out/$name-threads.txt"
  rm -f "$out/$name.data"
  python3 - "$out/$name-dso.txt" <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+(\S+)", line)
    if m:
        rows.append((m.group(3), int(m.group(2))))
total = sum(n for _, n in rows)
if not total:
    sys.exit("  no samples")
tracer = {"libstreamhaz-tracer": 0, "libcupti": 0, "libz": 0}
for dso, n in rows:
    for key in tracer:
        if dso.startswith(key):
            tracer[key] += n
work = total - sum(tracer.values())
print("  " + ", ".join(f"{d} {100 * n / total:.1f}%" for d, n in rows[:8]) + f" ({total} samples)")
if any(tracer.values()):
    per = {k: 100 * v / work for k, v in tracer.items()}
    print(f"  per 100 samples of the program's own: tracer {per['libstreamhaz-tracer']:.2f}, "
          f"CUPTI {per['libcupti']:.2f}, compression {per['libz']:.2f}; "
          f"on the program's threads {per['libstreamhaz-tracer'] + per['libcupti']:.2f}")
PY
  sed 's/^/  /' "$out/$name-sym.txt"
  sed 's/^/  by thread: /' "$out/$name-threads.txt"
}

record untraced "${job[@]}"
# Which libcupti the program binds: PyTorch loads the one of its `nvidia` wheel; a preloaded
# tracer binds the CUDA toolkit's first (same soname), and PyTorch then shares it.
wheel_cupti_dir() {
  python3 -c "import os, nvidia; print(os.path.join(list(nvidia.__path__)[0], 'cu13', 'lib'))"
}
toolkit_cupti=${CUPTI_TOOLKIT:-/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13}

for config in ${CONFIGS:-default stacks-off gpu-times-off}; do
  # CONFIG@wheel: the wheel's CUPTI first on the library path (a preloaded tracer binds it);
  # CONFIG@toolkit: the toolkit's CUPTI preloaded (the floor and PyTorch share it).
  cupti=; [[ $config == *@* ]] && cupti=${config##*@}
  name=${config//[:,\/@]/-}
  config=${config%@*}
  case $cupti in
    "") cupti_env=() ;;
    wheel) cupti_env=(env "LD_LIBRARY_PATH=$(wheel_cupti_dir)${program_libs:+:$program_libs}") ;;
    toolkit) cupti_env=(env "LD_PRELOAD=$toolkit_cupti") ;;
    *) echo "perf_profile: CONFIG@wheel or CONFIG@toolkit, not @$cupti" >&2; exit 2 ;;
  esac
  case $config in
    default) args=() ;;
    stacks-off) args=(--stacks off) ;;
    gpu-times-off) args=(--gpu-times off) ;;
    no-wrappers) args=(--driver-wrappers off) ;;
    gpu-times-off-no-wrappers) args=(--gpu-times off --driver-wrappers off) ;;
    api-tier) args=(--footprints api) ;;
    self-profile) args=(--self-profile on) ;;
    gpu-times:*) args=(--gpu-times "${config#gpu-times:}") ;;
    floor:*)
      record "$name" ${cupti_env[@]+"${cupti_env[@]}"} env STREAMHAZ_FLOOR="${config#floor:}" \
        CUDA_INJECTION64_PATH="$build/lib/libstreamhaz-cupti-floor.so" "${job[@]}"
      continue ;;
    *) echo "perf_profile: unknown configuration $config" >&2; exit 2 ;;
  esac
  record "$name" ${cupti_env[@]+"${cupti_env[@]}"} "$build/bin/streamhaz" run --force ${args[@]+"${args[@]}"} --out "$out/trace" -- "${job[@]}"
  if [ "$config" = self-profile ]; then
    "$build/bin/streamhaz" inspect "$out/trace"/rank*.shz 2>&1 | sed -n "/tracer's own time/,/records by kind/p" | head -40
  fi
done
rm -rf "$out/trace"
