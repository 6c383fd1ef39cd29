#!/usr/bin/env python3
"""Replay validation on the bundled H200 traces: prints a Markdown table of replayed step
times against measured ones (docs/sync-and-replay.md, "Validation").

usage: replay_validation.py STREAMHAZ [TRACES_DIR]

Unchanged replays are held against their own measured step time (target: within 3 %);
what-ifs against the measured run of the configuration they imitate (target: within 10 %).
"""
import re
import subprocess
import sys


def replay(streamhaz, folder, what_ifs=()):
    cmd = [streamhaz, "replay", folder]
    for w in what_ifs:
        cmd += ["--what-if", w]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    measured = float(re.search(r"measured step:\s+([\d.]+)", out).group(1))
    unchanged = float(re.search(r"replayed unchanged:\s+([\d.]+)", out).group(1))
    m = re.search(r"what-if:\s+([\d.]+)", out)
    races = re.search(r"race check of the what-if: (\d+)", out)
    return measured, unchanged, float(m.group(1)) if m else None, int(races.group(1)) if races else None


def main():
    streamhaz = sys.argv[1]
    traces = sys.argv[2] if len(sys.argv) > 2 else "traces"
    rows = []
    for gpus in ("1gpu", "2gpu"):
        for delay in ("", "-delay"):
            for mode in ("race", "serialize", "device", "host", "event", "event3", "index-reset"):
                name = f"{mode}-{gpus}{delay}"
                measured, unchanged, _, _ = replay(streamhaz, f"{traces}/{name}")
                rows.append((f"`{name}` unchanged", "-", measured, unchanged, 3))
    for name in ("torch-race-2gpu", "torch-event-2gpu"):
        measured, unchanged, _, _ = replay(streamhaz, f"{traces}/{name}")
        rows.append((f"`{name}` unchanged (whole run: no step range)", "-", measured, unchanged, 3))
    for gpus in ("1gpu", "2gpu"):
        for delay in ("", "-delay"):
            target, _, _, _ = replay(streamhaz, f"{traces}/event-{gpus}{delay}")
            cases = [
                (f"serialize-{gpus}{delay}", ["minimal-sync"]),
                (f"device-{gpus}{delay}", ["minimal-sync"]),
                (f"device-{gpus}{delay}", ["drop kind=device-sync"]),
            ]
            for src, w in cases:
                _, _, predicted, races = replay(streamhaz, f"{traces}/{src}", w)
                rows.append((f"`{src}` + `{'; '.join(w)}`", f"`event-{gpus}{delay}` measured ({races} race occurrences "
                             "in the what-if)", target, predicted, 10))
    # A slow reduction stream: the no-delay race trace with its predivide kernel stretched by
    # the 2000 µs the delayed runs spin, against the measured delayed run, and back.
    for gpus in ("1gpu", "2gpu"):
        target, _, _, _ = replay(streamhaz, f"{traces}/race-{gpus}-delay")
        fast, _, _, _ = replay(streamhaz, f"{traces}/race-{gpus}")
        # predivide takes about 70 µs; 2070 / 70 stretches it by the spin's 2000 µs.
        _, _, predicted, _ = replay(streamhaz, f"{traces}/race-{gpus}", ["scale kernel=*predivide* factor=29.6"])
        rows.append((f"`race-{gpus}` + `scale kernel=*predivide* factor=29.6`", f"`race-{gpus}-delay` measured",
                     target, predicted, 10))
        _, _, predicted, _ = replay(streamhaz, f"{traces}/race-{gpus}-delay", ["scale kernel=*spin* factor=0.0001"])
        rows.append((f"`race-{gpus}-delay` + `scale kernel=*spin* factor=0.0001`", f"`race-{gpus}` measured",
                     fast, predicted, 10))
    print("| replayed | against | measured step µs | replayed step µs | error | target |")
    print("|---|---|---|---|---|---|")
    worst = {3: 0.0, 10: 0.0}
    for what, against, measured, predicted, target in rows:
        err = 100.0 * (predicted - measured) / measured
        worst[target] = max(worst[target], abs(err))
        ok = "met" if abs(err) <= target else "**not met**"
        print(f"| {what} | {against} | {measured:.1f} | {predicted:.1f} | {err:+.2f} % | ±{target} % {ok} |")
    print(f"\nlargest error: unchanged {worst[3]:.2f} %, what-ifs {worst[10]:.2f} %")


if __name__ == "__main__":
    main()
