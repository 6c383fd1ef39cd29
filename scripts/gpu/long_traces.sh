#!/usr/bin/env bash
# Long real training runs traced at default settings, for the over-synchronisation pass's cost on
# real traces of a real length (the bundled ones are a few steps, judged whole):
#   bash scripts/gpu/long_traces.sh BUILD_DIR DS_SITE_TARBALL OUT_DIR
# Runs, each under `streamhaz run` with no option but the output folder and path maps:
#   gpt-ddp    tests/gpu/torch_gpt_train.py --parallel ddp   (GPT_STEPS steps, default 300)
#   gpt-fsdp2  tests/gpu/torch_gpt_train.py --parallel fsdp2 (GPT_STEPS steps)
#   ds-stock   tests/gpu/deepspeed_zero2.py --variant stock --comm-delay-us 3000 (DS_STEPS, 100)
# DS_SITE_TARBALL is scripts/gpu/deepspeed_oversync.sh's (DeepSpeed is carried, not installed);
# with none that exists, ds-stock is skipped. RUNS (comma-separated names) picks some. Then, on
# the machine that recorded them, the user time of `check --jobs 1` and `check --no-sync --jobs 1`
# on each, alternating, ROUNDS times (3).
# OUT_DIR gets summary.txt (program and check times and exit statuses, check's summary lines) and
# traces.tar (the trace folders, to rerun the comparison elsewhere).
set -u -o pipefail
usage="usage: long_traces.sh BUILD_DIR DS_SITE_TARBALL OUT_DIR"
build=$(cd "${1:?$usage}" && pwd) || exit 2
tarball=${2:?$usage}
out=${3:?$usage}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
[[ -f $tarball ]] && tarball=$(readlink -f "$tarball")
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
shz=$build/bin/streamhaz
work=$(mktemp -d /tmp/long_traces.XXXXXX) || exit 2
summary=$out/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
gpt_steps=${GPT_STEPS:-300}
ds_steps=${DS_STEPS:-100}
rounds=${ROUNDS:-3}

site=/tmp/site
if [[ -f $tarball ]] && tar xJf "$tarball" -C /tmp; then
  export PYTHONPATH=$site:$site/_fallback${PYTHONPATH:+:$PYTHONPATH}
  export DS_BUILD_OPS=0 DS_SKIP_CUDA_CHECK=1 DS_ACCELERATOR=cuda
fi

launch=(torchrun --standalone --nproc_per_node 1)
runs=(
  "gpt-ddp|${launch[*]} tests/gpu/torch_gpt_train.py --parallel ddp --optim foreach --steps $gpt_steps --warmup 2"
  "gpt-fsdp2|${launch[*]} tests/gpu/torch_gpt_train.py --parallel fsdp2 --optim foreach --steps $gpt_steps --warmup 2"
  "ds-stock|${launch[*]} tests/gpu/deepspeed_zero2.py --variant stock --ipg-buffers 2 --comm-delay-us 3000 --steps $ds_steps --warmup 1"
)
made=()
for r in "${runs[@]}"; do
  IFS='|' read -r name cmd <<< "$r"
  [[ -n ${RUNS:-} && ,$RUNS, != *,$name,* ]] && continue
  if [[ $name == ds-* && ! -d $site/deepspeed ]]; then say "$name: skipped (no DeepSpeed site)"; continue; fi
  t0=$(date +%s%N)
  # shellcheck disable=SC2086  # the command is words
  timeout -k 15 600 "$shz" run --force --out "$work/$name" --path-prefix-map "$here/=;$site/=site/" -- $cmd \
    > "$work/$name.log" 2>&1
  status=$?
  say "$name: exit $status in $(( ($(date +%s%N) - t0) / 1000000 )) ms; $(tail -1 "$work/$name.log" | cut -c1-200)"
  [[ $status -eq 0 ]] && made+=("$name")
  [[ $status -ne 0 ]] && tail -15 "$work/$name.log" | sed 's/^/    /' | tee -a "$summary"
done

for name in "${made[@]}"; do
  say "== $name: $("$shz" inspect "$work/$name" 2>&1 | grep -m1 'operations:')"
  "$shz" check --jobs 1 "$work/$name" > "$work/$name.check" 2>&1
  say "check exit $?: $(grep -m3 -i 'over-synchronisation\|judged\|races\|clean' "$work/$name.check" | tr '\n' ' ' | cut -c1-400)"
  for ((i = 1; i <= rounds; i++)); do
    for mode in sync no-sync; do
      opt=(); [[ $mode == no-sync ]] && opt=(--no-sync)
      /usr/bin/time -f "%U %e %M" -o "$work/time" "$shz" check "${opt[@]}" --jobs 1 "$work/$name" > /dev/null 2>&1
      say "$name round $i $mode: user s, wall s, max KB: $(cat "$work/time")"
    done
  done
done
tar cf "$out/traces.tar" -C "$work" "${made[@]}" $(cd "$work" && ls ./*.log ./*.check 2>/dev/null) 2>/dev/null
ls -la "$out" | tee -a "$summary"
