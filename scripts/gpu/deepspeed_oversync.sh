#!/usr/bin/env bash
# streamhaz's over-synchronisation verdicts and replay predictions on REAL DeepSpeed ZeRO-2 runs
# (tests/gpu/deepspeed_zero2.py: overlap_comm, contiguous gradients, a double-buffered IPG bucket),
# on one GPU machine:
#   bash scripts/gpu/deepspeed_oversync.sh BUILD_DIR DS_SITE_TARBALL OUT_DIR
# DS_SITE_TARBALL: a tar.xz holding site/ (deepspeed/ and the Python packages it needs that the
# machine lacks; site/_fallback/ holds typing_extensions, used only where the installed one is older
# than pydantic needs). It is unpacked to /tmp/site and put first on PYTHONPATH; nothing is built
# (DS_BUILD_OPS=0, no DeepSpeed extension is used). Made on a machine with PyPI, for Python 3.12:
#   pip download --no-deps --no-binary :all: deepspeed==0.19.8     # the sdist; its deepspeed/ -> site/
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux2014_x86_64 pydantic==2.12.5 pydantic-core==2.41.5 annotated-types==0.7.0 \
#     typing-inspection==0.4.2 hjson==3.1.0                       # each wheel unzipped into site/
#   tar cJf deepspeed-site.tar.xz site                             # (typing-extensions 4.15 in site/_fallback/)
#
# For each delay (DELAYS, µs of GPU sleep on the reduction stream before every gradient all-reduce,
# default 0,3000) and each variant (VARIANTS, default stock,events,offload, in the order the runs go;
# also stock-1buf and events-1buf: both IPG buffer slots alias one buffer), PAIRS times (default 1):
# one untraced run, then
# one traced (`streamhaz run`). Then, per traced run: `streamhaz check --format json --sync-notes`
# (with --minimal-sync), `streamhaz check --sync-notes` (text), and `streamhaz replay` unchanged and
# with what-ifs: minimal-sync; ipg-buffers 1 and 3 (two-buffer runs); scale stream="reduction stream"
# factor=2; with a delay, scale kernel=*spin_kernel* by 1e-6 and 0.5 (held against the measured run
# without the delay / with half of it, where one was run).
#
# OUT_DIR gets at most five files: summary.txt (one line per run: variant, delay, traced, median ms,
# exit status, check's sync summary; then losses, replays and predictions against measured runs),
# results.jsonl (the same, one JSON object per run and per replay), env.txt, logs.tar.xz (program
# logs, check and replay outputs, minimal-sync specs) and traces.tar (one tar.xz per traced run, at
# most 16 MiB in all, runs with a delay first; the summary names any left out).
#
# Environment: VARIANTS, DELAYS, PAIRS, STEPS (measured steps, 5), WARMUP (1), EXTRA_ARGS (more
# options for the program), TRACE_OPTS (more `streamhaz run` options; default maps this checkout's
# and the DeepSpeed site's paths to relative ones), CHECK_OPTS (more `streamhaz check` options, e.g.
# --sync-algorithm removal), RUN_TIMEOUT_S (per program run, 180),
# GPU_BUDGET_S (no run starts after this many seconds, 360), TOTAL_BUDGET_S (analysis commands
# are cut off so that packing starts by then, 480), JOBS (traced runs analysed at once, 6),
# PYTHON (python3).
set -u -o pipefail
usage="usage: deepspeed_oversync.sh BUILD_DIR DS_SITE_TARBALL OUT_DIR"
build=$(cd "${1:?$usage}" && pwd) || exit 2
tarball=$(readlink -f "${2:?$usage}") || exit 2
out=${3:?$usage}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
shz=$build/bin/streamhaz
py=${PYTHON:-python3}
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
say() { printf '[%4ss] %s\n' "$(elapsed)" "$*"; }

IFS=, read -r -a variants <<< "${VARIANTS:-stock,events,offload}"
IFS=, read -r -a delays <<< "${DELAYS:-0,3000}"
pairs=${PAIRS:-1}
steps=${STEPS:-5}
warmup=${WARMUP:-1}
run_timeout=${RUN_TIMEOUT_S:-180}
gpu_budget=${GPU_BUDGET_S:-360}
total_budget=${TOTAL_BUDGET_S:-480}
jobs_max=${JOBS:-6}
extra_args=${EXTRA_ARGS:-}
site=/tmp/site
trace_opts=${TRACE_OPTS:---path-prefix-map $here/=;$site/=site/}
check_opts=${CHECK_OPTS:-}

work=$(mktemp -d /tmp/ds_oversync.XXXXXX) || exit 2
mkdir -p "$work/logs" "$work/traces" "$work/analysis" "$work/tarred"
runs=$work/runs.tsv
: > "$runs"

# --- DeepSpeed and its dependencies -----------------------------------------------------------
rm -rf "$site"
if ! tar xJf "$tarball" -C /tmp; then
  say "cannot unpack $tarball to /tmp"
fi
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
# pydantic 2.12 needs typing_extensions >= 4.14.1; the bundled one only where the machine's is older.
if ! "$py" - <<'PY' 2>/dev/null
import importlib.metadata as m
from packaging.version import Version
raise SystemExit(0 if Version(m.version("typing_extensions")) >= Version("4.14.1") else 1)
PY
then
  export PYTHONPATH=$site/_fallback:$PYTHONPATH
  say "typing_extensions: using the bundled one ($site/_fallback)"
fi
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 DS_BUILD_OPS=0 DS_SKIP_CUDA_CHECK=1 DS_ACCELERATOR=cuda
# Bytecode of /tmp/site is written by the first import (the environment report below) and reused.

{
  echo "date: $(date -u +%FT%TZ)"
  echo "checkout: $here ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "streamhaz: $("$shz" --version 2>&1 | head -1)"
  echo "tarball: $tarball ($(sha256sum "$tarball" 2>/dev/null | cut -c1-16))"
  echo "PYTHONPATH=$PYTHONPATH"
  echo "settings: VARIANTS=${variants[*]} DELAYS=${delays[*]} PAIRS=$pairs STEPS=$steps WARMUP=$warmup EXTRA_ARGS=$extra_args"
  echo "TRACE_OPTS=$trace_opts"
  echo "CHECK_OPTS=$check_opts"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>&1 | head -2
  "$py" - <<'PY' 2>&1
import sys, time
print("python", sys.version.split()[0])
t = time.time()
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "import %.1fs" % (time.time() - t))
for n in ("typing_extensions", "pydantic", "pydantic_core", "annotated_types", "typing_inspection", "hjson", "msgpack", "einops", "cpuinfo", "psutil", "ninja"):
    try:
        m = __import__(n)
        print(n, getattr(m, "__version__", getattr(m, "VERSION", "")), m.__file__)
    except Exception as e:
        print(n, "MISSING:", e)
t = time.time()
import deepspeed
print("deepspeed", deepspeed.__version__.strip(), deepspeed.__file__, "import %.1fs" % (time.time() - t))
PY
} > "$work/env.txt" 2>&1
cat "$work/env.txt"
preflight_ok=1
grep -q '^deepspeed ' "$work/env.txt" || { preflight_ok=0; say "DeepSpeed does not import: every run is skipped (env.txt says why)"; }

# --- runs ---------------------------------------------------------------------------------------
program_args() {
  case $1 in
    stock | offload | events) echo "--variant $1 --ipg-buffers 2" ;;
    nosync | events-nosync) echo "--variant $([[ $1 == nosync ]] && echo stock || echo events) --ipg-buffers 2 --epilogue-sync none" ;;
    epilogue-wait) echo "--variant stock --ipg-buffers 2 --epilogue-sync wait" ;;
    stock-1buf | events-1buf) echo "--variant ${1%-1buf} --ipg-buffers 1" ;;
    *) return 1 ;;
  esac
}

# run NAME VARIANT DELAY PAIR MODE(untraced|traced)
run_one() {
  local name=$1 variant=$2 delay=$3 pair=$4 mode=$5
  local log=$work/logs/$name-$mode.log tdir=$work/traces/$name status t0 args
  if ! args=$(program_args "$variant"); then
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$variant" "$delay" "$pair" "$mode" "bad-variant" 0 >> "$runs"
    say "$name $mode: unknown variant '$variant' (stock, offload, events, stock-1buf, events-1buf, nosync, events-nosync, epilogue-wait)"
    return
  fi
  if [[ $preflight_ok == 0 || $(elapsed) -ge $gpu_budget ]]; then
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$variant" "$delay" "$pair" "$mode" "skipped" 0 >> "$runs"
    say "$name $mode: skipped ($([[ $preflight_ok == 0 ]] && echo 'DeepSpeed does not import' || echo "GPU budget of ${gpu_budget}s spent"))"
    return
  fi
  # shellcheck disable=SC2206  # the options are words
  local cmd=(torchrun --standalone --nproc_per_node 1 "$here/tests/gpu/deepspeed_zero2.py" $args
             --comm-delay-us "$delay" --steps "$steps" --warmup "$warmup" $extra_args)
  t0=$(date +%s)
  if [[ $mode == traced ]]; then
    # shellcheck disable=SC2086  # TRACE_OPTS are words
    timeout -k 15 "$run_timeout" "$shz" run --force --out "$tdir" $trace_opts -- "${cmd[@]}" > "$log" 2>&1
  else
    timeout -k 15 "$run_timeout" "${cmd[@]}" > "$log" 2>&1
  fi
  status=$?
  local secs=$(( $(date +%s) - t0 ))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$variant" "$delay" "$pair" "$mode" "$status" "$secs" >> "$runs"
  local final
  final=$(grep -o '{"median_ms".*' "$log" | tail -1)
  say "$name $mode: exit $status in ${secs}s ${final:0:160}"
  [[ $status -ne 0 ]] && tail -5 "$log" | sed 's/^/    /'
}

for ((p = 1; p <= pairs; p++)); do
  for delay in "${delays[@]}"; do
    for variant in "${variants[@]}"; do
      name=$variant-d$delay
      (( pairs > 1 )) && name=$name-p$p
      run_one "$name" "$variant" "$delay" "$p" untraced
      run_one "$name" "$variant" "$delay" "$p" traced
    done
  done
done
say "GPU runs done"

# --- analysis (CPU only; traced runs in parallel) -------------------------------------------------
remaining() { echo $(( total_budget - $(elapsed) - 25 )); }
# cmd_to FILE COMMAND...: runs it with what is left of the budget, output to FILE, status to FILE.status
cmd_to() {
  local file=$1 left
  shift
  left=$(remaining)
  if (( left < 10 )); then
    echo "not run: the time budget (TOTAL_BUDGET_S=$total_budget) is spent" > "$file"
    echo skipped > "$file.status"
    return
  fi
  timeout -k 5 "$left" "$@" > "$file" 2>&1
  echo $? > "$file.status"
}

analyze() {
  local name=$1 delay=$2 nbuf=$3 tdir=$work/traces/$1 a=$work/analysis/$1
  mkdir -p "$a"
  local t0
  t0=$(date +%s)
  # shellcheck disable=SC2086  # CHECK_OPTS are words
  cmd_to "$a/check.json.log" "$shz" check "$tdir" --format json --sync-notes --output "$a/check.json" \
    --minimal-sync "$a/minimal-sync.spec" --force $check_opts
  cmd_to "$a/replay-base.txt" "$shz" replay "$tdir"
  cmd_to "$a/replay-minimal-sync.txt" "$shz" replay "$tdir" --what-if 'minimal-sync'
  if [[ $nbuf == 2 ]]; then
    cmd_to "$a/replay-ipg1.txt" "$shz" replay "$tdir" --what-if 'ipg-buffers 1 name=ipg_buffer*'
    cmd_to "$a/replay-ipg3.txt" "$shz" replay "$tdir" --what-if 'ipg-buffers 3 name=ipg_buffer*'
  fi
  cmd_to "$a/replay-reduction-x2.txt" "$shz" replay "$tdir" --what-if 'scale stream="reduction stream" factor=2'
  if [[ $delay != 0 ]]; then
    cmd_to "$a/replay-no-spin.txt" "$shz" replay "$tdir" --what-if 'scale kernel=*spin_kernel* factor=0.000001'
    cmd_to "$a/replay-half-spin.txt" "$shz" replay "$tdir" --what-if 'scale kernel=*spin_kernel* factor=0.5'
  fi
  # shellcheck disable=SC2086
  cmd_to "$a/check.txt" "$shz" check "$tdir" --sync-notes $check_opts
  say "analysed $name in $(( $(date +%s) - t0 ))s (check exit $(cat "$a/check.json.log.status"), text $(cat "$a/check.txt.status"))"
}

while IFS=$'\t' read -r name variant delay pair mode status secs; do
  [[ $mode == traced ]] || continue
  if ! compgen -G "$work/traces/$name/*.shz" > /dev/null; then
    say "$name: no trace written (program exit $status)"
    continue
  fi
  nbuf=2
  [[ $variant == *-1buf ]] && nbuf=1
  while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; done
  analyze "$name" "$delay" "$nbuf" < /dev/null &
done < "$runs"
wait
say "analysis done"

# --- summary -----------------------------------------------------------------------------------
"$py" - "$work" "$out" <<'PY'
import json, os, re, sys

work, out = sys.argv[1], sys.argv[2]
rows = []
with open(os.path.join(work, "runs.tsv")) as f:
    for line in f:
        p = line.rstrip("\n").split("\t")
        if len(p) == 7:
            rows.append(dict(zip(["name", "variant", "delay", "pair", "mode", "status", "secs"], p)))


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def program(run):
    text = read(os.path.join(work, "logs", f"{run['name']}-{run['mode']}.log")) or ""
    steps, final = [], None
    for line in text.splitlines():
        i = line.find('{"')
        if i < 0:
            continue
        try:
            obj = json.loads(line[i:])
        except ValueError:
            continue
        if "median_ms" in obj:
            final = obj
        elif "step" in obj and "ms" in obj:
            steps.append(obj)
    errors = [l for l in text.splitlines() if "FAILED" in l or "Error" in l][:3]
    return steps, final, errors


NUM = r"([0-9]+(?:\.[0-9]+)?)"


def replay(path):
    text = read(path)
    if text is None:
        return None
    r = {"file": os.path.basename(path), "status": (read(path + ".status") or "?").strip()}
    for key, pat in (("measured_us", r"measured step:\s+" + NUM), ("unchanged_us", r"replayed unchanged:\s+" + NUM),
                     ("what_if_us", r"what-if:\s+" + NUM)):
        m = re.search(pat, text)
        if m:
            r[key] = float(m.group(1))
    m = re.search(r"race check of the what-if: (\d+) race occurrence\(s\), (\d+) in the captured run", text)
    if m:
        r["races_what_if"], r["races_captured"] = int(m.group(1)), int(m.group(2))
    r["notes"] = [l.strip() for l in text.splitlines() if l.strip().startswith(("buffers:", "minimal sync:", "note:", "streamhaz"))][:8]
    if "what_if_us" not in r and "unchanged_us" not in r:
        r["error"] = text.strip().splitlines()[-1][:300] if text.strip() else "empty output"
    return r


def check(name):
    a = os.path.join(work, "analysis", name)
    c = {"status_json": (read(os.path.join(a, "check.json.log.status")) or "-").strip(),
         "status_text": (read(os.path.join(a, "check.txt.status")) or "-").strip()}
    j = read(os.path.join(a, "check.json"))
    if j:
        try:
            d = json.loads(j)
            s = d.get("summary", {})
            c.update(races=s.get("races"), possible=s.get("possible_races"), oversync=s.get("oversync"),
                     sync_sites=len(d.get("sync_notes", [])) + (s.get("oversync") or 0), sync_scope=d.get("sync_scope"),
                     oversync_titles=[f.get("title") for f in d.get("findings", []) if f.get("kind") == "oversync"][:6],
                     oversync_details=[f.get("detail") for f in d.get("findings", []) if f.get("kind") == "oversync"][:6],
                     race_titles=[f.get("title") for f in d.get("findings", []) if f.get("kind") != "oversync"][:4],
                     minimal_sync=d.get("minimal_sync", [])[:6], sync_notes=d.get("sync_notes", [])[:40],
                     sites=d.get("sync_sites", []),
                     epilogue_key=next((f.get("key", "").rsplit("|", 1)[0] for f in d.get("findings", [])
                                        if f.get("kind") == "oversync" and any(
                                            "independent_gradient_partition_epilogue" in (fr.get("function") or "")
                                            for fr in (f.get("sync") or {}).get("stack", []))), None),
                     warnings=d.get("warnings", [])[:4])
        except ValueError as e:
            c["json_error"] = str(e)
    else:
        c["json_error"] = ((read(os.path.join(a, "check.json.log")) or "no output").strip().splitlines() or ["?"])[-1][:300]
    t = read(os.path.join(a, "check.txt")) or ""
    lines = t.splitlines()
    c["text_summary"] = next((l for l in reversed(lines) if l.startswith("streamhaz:")), lines[-1] if lines else "")
    c["replays"] = {}
    if os.path.isdir(a):
        for f in sorted(os.listdir(a)):
            if f.startswith("replay-") and f.endswith(".txt"):
                c["replays"][f[len("replay-"):-4]] = replay(os.path.join(a, f))
    return c


results = []
by_name = {}
for run in rows:
    steps, final, errors = program(run)
    run["steps"], run["final"], run["errors"] = steps, final, errors
    if run["mode"] == "traced" and run["status"] not in ("skipped", "bad-variant"):
        run["check"] = check(run["name"])
    by_name.setdefault(run["name"], {})[run["mode"]] = run
    results.append({"type": "run", **{k: v for k, v in run.items()}})

L = []
w = L.append
w("DeepSpeed ZeRO-2 over-synchronisation and replay (scripts/gpu/deepspeed_oversync.sh)")
env = read(os.path.join(work, "env.txt")) or ""
for l in env.splitlines():
    if l.startswith(("deepspeed ", "torch ", "python ", "pydantic ", "streamhaz:", "settings:")) or "H200" in l or "NVIDIA" in l:
        w("  " + l)
w("")
w("Runs: variant | delay_us | traced | median_ms (program, synchronised wall clock) | exit | final loss | param sum | flushes/step | check")
for run in rows:
    f = run.get("final") or {}
    med = f.get("median_ms")
    line = (f"{run['variant']:<12} | {run['delay']:>5} | {'traced  ' if run['mode'] == 'traced' else 'untraced'} | "
            f"{med if med is not None else '-':>9} | exit {run['status']:<7} | loss {f.get('final_loss', '-')} | "
            f"params {f.get('param_sum', '-')} | flushes {(f.get('flushes_per_step') or ['-'])[-1]}")
    c = run.get("check")
    if c:
        if "json_error" in c:
            line += f" | check exit {c['status_json']}: {c['json_error']}"
        else:
            line += (f" | check exit {c['status_json']}: {c['races']} races, {c['possible']} possible, "
                     f"{c['oversync']} over-sync, {c['sync_sites']} sync sites judged ({c['sync_scope'] or 'scope ?'})")
        line += f" | {c['text_summary']}"
    if run["errors"]:
        line += " | " + " // ".join(e.strip()[:160] for e in run["errors"])
    w(line)

w("")
w("Losses per measured step (the stock and events runs of one delay must agree exactly; *-1buf stock races):")
for run in rows:
    if run["steps"]:
        w(f"  {run['name']:<22} {run['mode']:<8} " + " ".join(repr(s.get('loss')) for s in run["steps"]))
for run in rows:
    st = (run.get("final") or {}).get("stats")
    if st:
        w(f"  {run['name']:<22} {run['mode']:<8} patch counters {json.dumps(st)}  ({(run.get('final') or {}).get('note', '')})")

groups = {}
for run in rows:
    f = run.get("final")
    if f:
        groups.setdefault((run["delay"], run["pair"]), []).append(run)
for (delay, pair), rs in sorted(groups.items()):
    ref = [r for r in rs if r["variant"] in ("stock", "events")]
    vals = {(r["variant"], r["mode"]): (r["final"].get("final_loss"), r["final"].get("param_sum")) for r in ref}
    if len(set(vals.values())) > 1:
        w(f"  DIFFER at delay {delay} pair {pair}: {vals}")
    elif vals:
        w(f"  agree at delay {delay} pair {pair}: stock/events loss {list(vals.values())[0][0]!r}, params {list(vals.values())[0][1]!r}")

w("")
w("Over-synchronisation findings and the minimal synchronisation (traced runs):")
for run in rows:
    c = run.get("check")
    if not c or "json_error" in c:
        continue
    w(f"  {run['name']}:")
    for t, d in zip(c.get("oversync_titles", []), c.get("oversync_details", [])):
        w(f"    oversync: {t}" + (f" -- {d}" if d else ""))
    for t in c.get("race_titles", []):
        w(f"    race: {t}")
    for m in c.get("minimal_sync", []):
        w(f"    minimal: {m}")
    for n in c.get("warnings", []):
        w(f"    warning: {n}")

w("")
w("Replays (µs; what-if against the unchanged replay; race occurrences what-if/captured):")
for run in rows:
    c = run.get("check")
    if not c:
        continue
    for tag, r in c.get("replays", {}).items():
        if r is None:
            continue
        results.append({"type": "replay", "run": run["name"], "what_if": tag, **r})
        if "error" in r:
            w(f"  {run['name']:<22} {tag:<14} exit {r['status']}: {r['error']}")
            continue
        wi = r.get("what_if_us")
        un = r.get("unchanged_us")
        pct = f"{100 * (wi - un) / un:+.2f} %" if wi and un else ""
        w(f"  {run['name']:<22} {tag:<14} measured {r.get('measured_us', '-')} unchanged {un} what-if {wi if wi is not None else '-'} {pct}"
          + (f" races {r.get('races_what_if')}/{r.get('races_captured')}" if "races_what_if" in r else ""))


def measured(name):
    """The counterpart's measured step: its trace's (replay 'measured step') and its programs' medians."""
    runs = by_name.get(name, {})
    tr = runs.get("traced", {})
    base = ((tr.get("check") or {}).get("replays") or {}).get("base") or {}
    return (base.get("measured_us"), ((tr.get("final") or {}).get("median_ms")),
            ((runs.get("untraced", {}).get("final") or {}).get("median_ms")))


w("")
w("Predictions against measured runs (error = predicted / counterpart's traced GPU step - 1):")
for run in rows:
    c = run.get("check")
    if not c:
        continue
    suffix = f"-p{run['pair']}" if run["name"].endswith(f"-p{run['pair']}") else ""
    d = int(float(run["delay"]))
    pairs = []
    if run["variant"] == "stock":
        pairs.append(("minimal-sync", f"events-d{run['delay']}{suffix}"))
        pairs.append(("ipg1", f"stock-1buf-d{run['delay']}{suffix}"))
    if run["variant"] == "events":
        pairs.append(("minimal-sync", f"events-d{run['delay']}{suffix}"))  # its own run: consistency
        pairs.append(("ipg1", f"events-1buf-d{run['delay']}{suffix}"))
    if d:
        pairs.append(("no-spin", f"{run['variant']}-d0{suffix}"))
        pairs.append(("half-spin", f"{run['variant']}-d{d // 2}{suffix}"))
    for tag, other in pairs:
        if other not in by_name:
            continue  # that configuration was not run
        r = c.get("replays", {}).get(tag) or {}
        pred = r.get("what_if_us")
        m_trace, m_traced_prog, m_untraced_prog = measured(other)
        if pred is None or m_trace is None:
            w(f"  {run['name']} + {tag:<12} vs {other}: predicted {pred}, measured {m_trace} (not both there)")
            continue
        err = 100 * (pred / m_trace - 1)
        w(f"  {run['name']} + {tag:<12} predicts {pred:.1f} µs; {other} measured {m_trace:.1f} µs (trace), "
          f"programs {m_traced_prog} / {m_untraced_prog} ms traced/untraced: error {err:+.2f} %")
        results.append({"type": "prediction", "run": run["name"], "what_if": tag, "counterpart": other,
                        "predicted_us": pred, "measured_trace_us": m_trace, "measured_traced_ms": m_traced_prog,
                        "measured_untraced_ms": m_untraced_prog, "error_pct": round(err, 3)})

w("")
w("Site-level predictions (check's replay of the judged steps: the site removed, or replaced by the minimal waits")
w("for what it protects), against the measured run that makes the same change (error as above):")
for run in rows:
    c = run.get("check")
    if not c or run["variant"] != "stock":
        continue
    suffix = f"-p{run['pair']}" if run["name"].endswith(f"-p{run['pair']}") else ""
    sites = c.get("sites") or []
    own_trace = measured(run["name"])[0]
    barrier = max((x for x in sites if x.get("what") == "cudaStreamWaitEvent(compute stream, event recorded on reduction stream)"),
                  key=lambda x: x.get("instances", 0), default=None)
    epilogue = next((x for x in sites if c.get("epilogue_key") and x.get("key") == c["epilogue_key"]), None)
    for label, site, other in (("#5606 barrier, minimal waits instead", barrier, f"events-d{run['delay']}{suffix}"),
                               ("epilogue device synchronize, minimal waits instead", epilogue,
                                f"epilogue-wait-d{run['delay']}{suffix}"),
                               ("epilogue device synchronize removed", epilogue, f"nosync-d{run['delay']}{suffix}")):
        if not site or other not in by_name:
            w(f"  {run['name']}: {label}: {'site not found' if not site else other + ' not run'}")
            continue
        if label.endswith("removed"):
            # Removing a site that protects something is no change to predict: the measured run shows
            # whether its pairs really race (the race check of that trace, its losses against stock's).
            oc = (by_name[other].get("traced") or {}).get("check") or {}
            loss = lambda n, m: ((by_name.get(n, {}).get(m) or {}).get("final") or {}).get("final_loss")
            w(f"  {run['name']}: {label} [{site.get('verdict')}, {site.get('pairs')} pair(s)]: {other} check finds "
              f"{oc.get('races')} race(s); final loss untraced {loss(other, 'untraced')} / traced {loss(other, 'traced')} "
              f"against stock's {loss(run['name'], 'untraced')}")
            continue
        step, pred = site.get("step_ns"), site.get("predicted_step_ns")
        m_trace, m_traced_prog, m_untraced_prog = measured(other)
        if not step or not pred or not m_trace or not own_trace:
            w(f"  {run['name']}: {label} ({site.get('verdict')}): predicted {pred}, measured {m_trace}")
            continue
        change = pred / step - 1
        pred_abs = own_trace * (1 + change)
        err = 100 * (pred_abs / m_trace - 1)
        w(f"  {run['name']}: {label} [{site.get('verdict')}, {site.get('instances')}x, stall "
          f"{(site.get('stall_ns_per_step') or 0) / 1e3:.1f} µs/step]: predicts {100 * change:+.2f} % -> {pred_abs / 1e3:.1f} µs; "
          f"{other} measured {m_trace / 1e3:.1f} µs ({100 * (m_trace / own_trace - 1):+.2f} %), programs {m_traced_prog} / "
          f"{m_untraced_prog} ms traced/untraced: error {err:+.2f} %")
        results.append({"type": "site-prediction", "run": run["name"], "site": label, "verdict": site.get("verdict"),
                        "counterpart": other, "predicted_change_pct": round(100 * change, 3),
                        "measured_change_pct": round(100 * (m_trace / own_trace - 1), 3), "error_pct": round(err, 3)})
    ms = c.get("replays", {}).get("minimal-sync") or {}
    other = f"events-nosync-d{run['delay']}{suffix}"
    m_trace = measured(other)[0]
    if ms.get("what_if_us") and m_trace:
        w(f"  {run['name']}: whole minimal synchronisation predicts {ms['what_if_us']:.1f} µs; {other} measured "
          f"{m_trace:.1f} µs: error {100 * (ms['what_if_us'] / m_trace - 1):+.2f} %")

with open(os.path.join(out, "summary.txt"), "w") as f:
    f.write("\n".join(L) + "\n")
with open(os.path.join(out, "results.jsonl"), "w") as f:
    for r in results:
        f.write(json.dumps(r, default=str) + "\n")
print("\n".join(L))
PY
say "summary written"

# --- packing: at most five files in OUT --------------------------------------------------------
cp "$work/env.txt" "$out/env.txt"
XZ_OPT=-T0 tar cJf "$out/logs.tar.xz" -C "$work" logs analysis runs.tsv env.txt 2>/dev/null
limit=$((16 * 1024 * 1024))
traced=()
while IFS=$'\t' read -r name variant delay pair mode status secs; do
  [[ $mode == traced ]] || continue
  compgen -G "$work/traces/$name/*.shz" > /dev/null || continue
  if [[ $delay == 0 ]]; then traced+=("1 $name"); else traced+=("0 $name"); fi
done < "$runs"
packed=() left=()
total=0
while read -r _ name; do
  [[ -n $name ]] || continue
  XZ_OPT=-T0 tar cJf "$work/tarred/$name.tar.xz" -C "$work/traces" "$name" 2>/dev/null
  size=$(stat -c %s "$work/tarred/$name.tar.xz")
  if (( total + size + 10240 * (${#packed[@]} + 2) <= limit )); then
    packed+=("$name.tar.xz")
    total=$((total + size))
  else
    left+=("$name ($(( size / 1024 )) KiB)")
  fi
done < <(printf '%s\n' "${traced[@]}" | sort -s -k1,1n)
if (( ${#packed[@]} )); then
  tar cf "$out/traces.tar" -C "$work/tarred" "${packed[@]}"
fi
{
  echo ""
  echo "traces.tar: ${packed[*]:-none}"
  (( ${#left[@]} )) && echo "left out of traces.tar (16 MiB): ${left[*]}"
  echo "elapsed: $(elapsed) s"
} | tee -a "$out/summary.txt"
ls -la "$out"
rm -rf "$work"
