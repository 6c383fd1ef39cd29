#!/usr/bin/env bash
# The main job on the embedded default: sets up, builds the streamhaz command, and checks
# every trace bundled in traces/ (captured on H200 GPUs) against its expected verdict, then
# prints the full report of the DeepSpeed #5523 race as captured on 2 GPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${STREAMHAZ_BUILD_DIR:-build-default}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTREAMHAZ_CUDA=OFF -DSTREAMHAZ_TESTS=OFF >/dev/null
cmake --build "$build" --target streamhaz >/dev/null
shz=$build/bin/streamhaz

mismatches=0
printf '%-44s %-8s %-8s %s\n' trace expected verdict "corrupted elements (workload self-check, same run)"
while IFS= read -r line; do
  # name, folder, check arguments, expected verdict, corruption count: one manifest line.
  IFS='|' read -r name folder args expect corrupted < <(python3 -c '
import json, sys
e = json.loads(sys.argv[1])
print("|".join([e["name"], e.get("folder", e["name"]), " ".join(e.get("check_args", [])), e["expect"],
                 str(e.get("reducer_corrupted_elements", e.get("workload_corrupted_elements")))]))' "$line")
  status=0
  report=$("$shz" check --format json --fail-on races "traces/$folder" $args 2>/dev/null) || status=$?
  case $status in
    0) verdict=$(python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print("possible" if r["summary"]["possible_races"] else "clean")' <<< "$report") ;;
    1) verdict=race ;;
    *) verdict="error($status)" ;;
  esac
  [[ $verdict == "$expect" ]] || mismatches=$((mismatches + 1))
  printf '%-44s %-8s %-8s %s\n' "$name" "$expect" "$verdict" "$corrupted"
done < traces/manifest.jsonl

echo
echo "=== streamhaz check traces/race-2gpu-delay (DeepSpeed 0.8.0-0.14.2 synchronisation)"
"$shz" check traces/race-2gpu-delay || true
echo
if [[ $mismatches -eq 0 ]]; then
  echo "run-default: every bundled trace got its expected verdict"
else
  echo "run-default: $mismatches trace(s) got an unexpected verdict" >&2
  exit 1
fi
