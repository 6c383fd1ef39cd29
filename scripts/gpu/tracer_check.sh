#!/usr/bin/env bash
# GPU check of the tracer, run on the accelerator machine (2 GPUs):
#   bash scripts/gpu/tracer_check.sh BUILD_DIR [OUT_DIR]
# 1. tracer_probe on 1 GPU and on 2 GPUs with NCCL: the trace must hold what the program issued
#    (counts per stream, byte ranges, NCCL calls, event edges, timestamps).
# 2. PyTorch under torchrun, 2 ranks: all_reduce on a side stream, copy_ into a buffer.
# 3. The reducer on 1 and 2 GPUs; a rank killed by SIGTERM / SIGKILL leaves a readable trace;
#    a process without CUDA leaves none; exit statuses pass through.
# 4. Overhead: reducer step time traced / untraced, host ns per call in an empty-kernel loop.
# The functional checks trace with --gpu-times all: every operation must carry its GPU times.
# Exits 1 if any check failed.
set -u -o pipefail
build=$(cd "${1:?usage: tracer_check.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp}/tracer-check}
here=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # libfmt for the CLI, if not installed
shz=$build/bin/streamhaz
dump=$build/bin/trace_to_jsonl
tmp=$(mktemp -d)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
section() { echo; echo "=== $*"; }
mkdir -p "$out"

nvidia-smi -L
ngpu=$(nvidia-smi -L | wc -l)

if [[ -z ${SKIP_FUNCTIONAL:-} ]]; then
section "probe, 1 GPU"
"$shz" run --gpu-times all --out "$tmp/probe1" -- "$build/bin/tracer_gpu_probe" "$tmp/expect1.json" || fail "probe exit status $?"
ls -l "$tmp/probe1"
"$dump" "$tmp/probe1/pid"*.shz > "$tmp/probe1.jsonl" || fail "probe trace unreadable"
python3 "$here/tests/gpu/check_trace.py" "$tmp/expect1.json" "$tmp/probe1.jsonl" || fail "probe 1 GPU"

if [[ $ngpu -ge 2 ]]; then
  section "probe, 2 GPUs with NCCL"
  "$shz" run --gpu-times all --out "$tmp/probe2" -- bash -c "
    RANK=0 WORLD_SIZE=2 $build/bin/tracer_gpu_probe $tmp/expect2_0.json $tmp/ncclid & p=\$!
    RANK=1 WORLD_SIZE=2 $build/bin/tracer_gpu_probe $tmp/expect2_1.json $tmp/ncclid; r=\$?
    wait \$p && exit \$r" || fail "probe 2 GPUs exit status"
  ls -l "$tmp/probe2"
  for r in 0 1; do "$dump" "$tmp/probe2/rank$r.shz" > "$tmp/probe2_$r.jsonl" || fail "rank $r trace unreadable"; done
  python3 "$here/tests/gpu/check_trace.py" "$tmp/expect2_0.json" "$tmp/probe2_0.jsonl" --peer "$tmp/probe2_1.jsonl" || fail "probe rank 0"
  python3 "$here/tests/gpu/check_trace.py" "$tmp/expect2_1.json" "$tmp/probe2_1.jsonl" --peer "$tmp/probe2_0.jsonl" || fail "probe rank 1"
  cp "$tmp/probe2/rank0.shz" "$out/probe2_rank0.shz"

  section "PyTorch under torchrun, 2 ranks"
  PROBE_EXPECT_DIR=$tmp "$shz" run --gpu-times all --out "$tmp/torch" -- \
    torchrun --standalone --nproc_per_node 2 "$here/tests/gpu/torch_side_stream.py" 2>&1 | grep -v "^W.*OMP_NUM_THREADS\|^\*\*\*\*" || fail "torchrun"
  ls -l "$tmp/torch"
  for r in 0 1; do
    "$dump" "$tmp/torch/rank$r.shz" > "$tmp/torch_$r.jsonl" || fail "torch rank $r trace unreadable"
    python3 "$here/tests/gpu/check_torch_trace.py" "$tmp/torch_expect$r.json" "$tmp/torch_$r.jsonl" || fail "torch rank $r"
  done
  cp "$tmp/torch/rank1.shz" "$out/torch_rank1.shz"
fi

section "reducer traced, 1 and $ngpu GPU(s)"
for g in 1 $([[ $ngpu -ge 2 ]] && echo 2); do
  "$shz" run --gpu-times all --out "$tmp/red$g" -- "$build/bin/streamhaz-reducer" --nproc $g --steps 6 --warmup 2 | tail -2 || fail "reducer $g exit"
  for f in "$tmp/red$g"/*.shz; do
    "$dump" "$f" > "$tmp/red.jsonl" || fail "reducer trace $f unreadable"
    python3 - "$tmp/red.jsonl" "$g" <<'PY' || fail "reducer trace content $g GPUs"
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
recs = rows[1:-1]
c = collections.Counter(r["type"] for r in recs)
timed = {r["op_seq"] for r in recs if r["type"] == "timing"}
ops = [r for r in recs if r["type"] in ("kernel", "memcpy", "memset", "nccl")]
names = {r["id"]: r["text"] for r in recs if r["type"] == "string"}
streams = sorted(set(names.get(r["name"]) for r in recs if r["type"] == "stream_name"))
bufs = sorted(set(names.get(r["name"]) for r in recs if r["type"] == "buffer_name"))
nvtx = sorted(set(names.get(r["nvtx"]) for r in ops if r["nvtx"]))
nccl = collections.Counter(r["kind"] for r in recs if r["type"] == "nccl")
# One rank: NCCL launches no kernel, so its calls have no GPU interval.
untimed = sum(1 for r in ops if r["seq"] not in timed and not (r["type"] == "nccl" and r["nranks"] == 1))
print(f"rank {rows[0]['header'].get('rank')}: {dict(c)}")
print(f"  nccl {dict(nccl)}; streams {streams}; buffers {bufs}; nvtx {nvtx[:6]}; ops without timing {untimed}/{len(ops)}")
ok = rows[-1]["clean_end"] and c["nccl"] > 0 and "reduction stream" in streams and untimed == 0 and any("average_tensor" in n for n in nvtx)
sys.exit(0 if ok else 1)
PY
  done
done

fi  # SKIP_FUNCTIONAL

section "a rank killed mid-run leaves a readable trace"
for sig in TERM KILL; do
  STREAMHAZ_FLUSH_MS=200 timeout -s KILL 60 "$shz" run --out "$tmp/kill$sig" -- "$build/bin/streamhaz-reducer" --nproc 1 --steps 4000 --warmup 1 >/dev/null 2>&1 &
  runner=$!
  sleep 6
  # timeout -> streamhaz run -> reducer (-> its rank, if it re-executes itself): kill the deepest.
  victim=$runner
  while child=$(pgrep -P "$victim" | head -1) && [[ -n $child ]]; do victim=$child; done
  kill -$sig "$victim"; wait $runner; echo "exit status after SIG$sig of pid $victim ($(basename "$(readlink /proc/$victim/exe 2>/dev/null || echo gone)")): $?"
  f=$(ls "$tmp/kill$sig"/*.shz | head -1)
  "$dump" "$f" | tail -1 | tee "$tmp/kill.txt" || fail "killed trace unreadable ($sig)"
  grep -q '"records":[1-9]' "$tmp/kill.txt" || fail "killed trace holds no records ($sig)"
done

section "no CUDA, no trace; exit status passes through"
"$shz" run --out "$tmp/nocuda" -- bash -c 'echo plain program; exit 7'; s=$?
[[ $s -eq 7 ]] || fail "exit status $s != 7"
[[ -z $(ls -A "$tmp/nocuda") ]] || fail "a process without CUDA left a trace: $(ls "$tmp/nocuda")"
echo "exit status $s, files: $(ls -A "$tmp/nocuda" | wc -l)"

section "CUPTI already taken: one warning, untraced, output unchanged"
plain=$("$build/bin/tracer_gpu_probe" "$tmp/expect_plain.json"); plain_status=$?
taken=$(LD_PRELOAD=$build/lib/libcupti_squatter.so "$shz" run --out "$tmp/taken" -- "$build/bin/tracer_gpu_probe" "$tmp/expect_taken.json" 2>"$tmp/taken.err"); taken_status=$?
cat "$tmp/taken.err"
[[ "$plain" == "$taken" && $plain_status -eq $taken_status ]] || fail "output or status changed under a taken CUPTI"
[[ $(grep -c '^streamhaz:' "$tmp/taken.err") -eq 1 ]] || fail "expected exactly one streamhaz: warning"
[[ -z $(ls -A "$tmp/taken" 2>/dev/null) ]] || fail "a trace was written although CUPTI was taken"

section "overhead: empty-kernel launch loop (ns per call; full split: launch_overhead.sh)"
CONFIGS="untraced tracer:all tracer:sampled:20/200 tracer:off" bash "$here/scripts/gpu/launch_overhead.sh" "$build" 3 1500

section "overhead: reducer step time, untraced and traced alternating ($ngpu GPU(s))"
g=$([[ $ngpu -ge 2 ]] && echo 2 || echo 1)
for i in 1 2 3; do
  u=$("$build/bin/streamhaz-reducer" --nproc $g --steps 30 | grep '^reducer: rank=0' | sed 's/.*step_ms=\([0-9.]*\).*/\1/')
  t=$("$shz" run --out "$tmp/redbench$i" -- "$build/bin/streamhaz-reducer" --nproc $g --steps 30 | grep '^reducer: rank=0' | sed 's/.*step_ms=\([0-9.]*\).*/\1/')
  echo "pair $i: untraced step_ms=$u traced step_ms=$t ratio=$(python3 -c "print(round($t/$u, 4))")"
done
ls -l "$tmp/redbench1"

section "streamhaz run --check"
"$shz" run --check --out "$tmp/checked" -- "$build/bin/streamhaz-reducer" --nproc $g --sync race --steps 4 --comm-delay-us 2000 2>&1 | tail -15
echo "run --check exit status: $?"

echo
[[ $failures -eq 0 ]] && echo "tracer_check: ALL PASSED" || echo "tracer_check: $failures FAILED"
exit $((failures > 0))
